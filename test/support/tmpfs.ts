import { execFileSync } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A real full file system for fault tests: a small tmpfs mounted over a directory (needs root;
 * `canMount` says whether this process may), and a file that fills it.
 */
export const canMount = process.getuid?.() === 0;

/** Mounts a tmpfs of `size` (`2m`, `24m`) over `dir`; answers the unmount, for afterAll. */
export function mountTmpfs(dir: string, size: string): () => void {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir]);
  return () => execFileSync('umount', ['-l', dir]);
}

/** Fills the file system holding `dir` with one file until ENOSPC; answers its path (unlink it to free the space). */
export function fillFileSystem(dir: string): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(16 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  return path;
}
