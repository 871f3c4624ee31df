const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory',
  ENOTDIR: 'a component of the path is not a directory',
  EEXIST: 'already exists',
  ENOTEMPTY: 'directory not empty',
  ELOOP: 'too many levels of symbolic links',
  ENOSPC: 'no space left on device',
  EROFS: 'read-only file system',
  EXDEV: 'on another file system',
  EBUSY: 'busy',
};

/** `file.read: /etc/x: permission denied`: the function, the path, and the reason in words. */
export function fsError(fn: string, path: string, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException)?.code;
  const reason = (code && REASONS[code]) ?? (error instanceof Error ? error.message : String(error));
  return new Error(`file.${fn}: ${path}: ${reason}`, { cause: error });
}

export function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
