import { Writable } from 'node:stream';
import type { CommandContext } from './commands.js';

/**
 * One line from the command's stdin, typed without echo on a terminal (after `prompt` on stderr),
 * or piped (`printf %s "$v" | runner ...`): how a command takes a password or a secret value
 * without a flag, which `ps` and the shell's history would show. Undefined when stdin ended first.
 */
export async function readHiddenLine(ctx: CommandContext, prompt: string): Promise<string | undefined> {
  const stdin = ctx.stdin as NodeJS.ReadStream;
  if (stdin.isTTY) ctx.stderr.write(prompt);
  // On a terminal readline echoes what is typed to its output: a stream that drops it hides the value.
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
  // Loaded when a value is typed: every command imports the modules that call this.
  const { createInterface } = await import('node:readline');
  const lines = createInterface({ input: stdin, output: silent, terminal: stdin.isTTY === true });
  const line = await new Promise<string | undefined>((resolve) => {
    lines.once('line', resolve);
    lines.once('close', () => resolve(undefined));
  });
  lines.close();
  if (stdin.isTTY) ctx.stderr.write('\n');
  return line;
}
