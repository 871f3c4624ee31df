import { readFile } from 'node:fs/promises';
import { InvalidInputError, readHiddenLine, type CommandContext } from '@runner/plugin-sdk';

/**
 * A password for a command, never from a flag (flags show in `ps`): `--password-file`, else
 * `RUNNER_PASSWORD`, else one line from stdin (typed without echo on a terminal).
 */
export async function readPassword(
  ctx: CommandContext,
  file: unknown,
  prompt: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  if (typeof file === 'string') {
    try {
      return (await readFile(file, 'utf8')).replace(/\r?\n$/, '');
    } catch (error) {
      throw new InvalidInputError(
        `--password-file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
        { field: 'password-file' },
      );
    }
  }
  if (env.RUNNER_PASSWORD) return env.RUNNER_PASSWORD;
  const line = await readHiddenLine(ctx, prompt);
  if (line === undefined || line === '') {
    throw new InvalidInputError('no password given: use --password-file <file>, RUNNER_PASSWORD, or type it on stdin', {
      field: 'password',
    });
  }
  return line;
}
