import { stat } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import { InvalidInputError, NotFoundError } from '@runner/plugin-sdk';

/**
 * Checks where a backup is to be written before any work is done: a path, in a directory that
 * exists, outside the store's own directory (where it would be taken for a store file).
 * Returns the absolute path.
 */
export async function checkBackupOutput(outputPath: unknown, storeDir: string): Promise<string> {
  if (typeof outputPath !== 'string' || outputPath.trim() === '') {
    throw new InvalidInputError('backup needs an output path', { field: 'output' });
  }
  const output = resolve(outputPath);
  if (output === storeDir || output.startsWith(storeDir + sep)) {
    throw new InvalidInputError(`backup output ${output} is inside the store directory ${storeDir}`, {
      field: 'output',
    });
  }
  const directory = dirname(output);
  const info = await stat(directory).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new NotFoundError(`directory ${directory} for the backup ${output} does not exist`, {
      details: { field: 'output' },
    });
  }
  return output;
}
