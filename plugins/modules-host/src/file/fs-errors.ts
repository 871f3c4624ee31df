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

/** `permission denied`: the reason of a file system error in words. */
export function fsReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException)?.code;
  return (code && REASONS[code]) ?? (error instanceof Error ? error.message : String(error));
}

/** `file.read: /etc/x: permission denied`: the function, the path, and the reason in words. */
export function fsError(fn: string, path: string, error: unknown): Error {
  return new Error(`file.${fn}: ${path}: ${fsReason(error)}`, { cause: error });
}

export function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
