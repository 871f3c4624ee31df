import { randomBytes } from 'node:crypto';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Makes renames, creations and removals in `dir` survive a crash (POSIX wants the directory synced). */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The file's bytes, or null when it does not exist. */
export async function readFileIfExists(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

export async function removeIfExists(path: string): Promise<boolean> {
  try {
    await unlink(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** Writes `data` to a new file and fsyncs it; the file must not exist. */
export async function writeNewFileSynced(path: string, data: Uint8Array): Promise<void> {
  const handle = await open(path, 'wx', 0o600);
  try {
    let offset = 0;
    while (offset < data.length) {
      const { bytesWritten } = await handle.write(data, offset, data.length - offset, offset);
      offset += bytesWritten;
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Replaces `path` with `data` so that a crash leaves either the old file or the whole new one:
 * temp file in the same directory, fsync, rename, fsync the directory.
 */
export async function replaceFileAtomically(path: string, data: Uint8Array, tempPath?: string): Promise<void> {
  const temp =
    tempPath ?? join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  await removeIfExists(temp);
  try {
    await writeNewFileSynced(temp, data);
    await rename(temp, path);
  } catch (error) {
    await removeIfExists(temp).catch(() => undefined);
    throw error;
  }
  await fsyncDir(dirname(path));
}
