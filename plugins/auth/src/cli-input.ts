import { readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { InvalidInputError, type CommandContext } from '@runner/plugin-sdk';

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
  const stdin = ctx.stdin as NodeJS.ReadStream;
  if (stdin.isTTY) ctx.stderr.write(prompt);
  // On a terminal readline echoes what is typed to its output: a stream that drops it hides the password.
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
  // Loaded when a password is typed: every command imports this module (through the auth commands).
  const { createInterface } = await import('node:readline');
  const lines = createInterface({ input: stdin, output: silent, terminal: stdin.isTTY === true });
  const line = await new Promise<string | undefined>((resolve) => {
    lines.once('line', resolve);
    lines.once('close', () => resolve(undefined));
  });
  lines.close();
  if (stdin.isTTY) ctx.stderr.write('\n');
  if (line === undefined || line === '') {
    throw new InvalidInputError('no password given: use --password-file <file>, RUNNER_PASSWORD, or type it on stdin', {
      field: 'password',
    });
  }
  return line;
}
