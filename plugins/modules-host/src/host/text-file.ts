import { chmod, readFile, rename, stat, writeFile } from 'node:fs/promises';

/** The file's text, or '' when it does not exist. */
export async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}

/** Replaces the file atomically (written beside it, renamed), keeping its mode if it had one. */
export async function writeText(path: string, text: string, mode = 0o644): Promise<void> {
  const kept = await stat(path).then(
    (s) => s.mode & 0o7777,
    () => mode,
  );
  const temp = `${path}.runner-${process.pid}`;
  await writeFile(temp, text, { mode: kept });
  await chmod(temp, kept);
  await rename(temp, path);
}
