/** Checks that Lua source compiles, throwing otherwise (the runtime's `compile`). */
export type Compile = (source: string) => void;

function compiles(compile: Compile, source: string): boolean {
  try {
    compile(source);
    return true;
  } catch {
    return false;
  }
}

/**
 * Rewrites one chunk the REPL ran into a statement of a script that `.load` replays, keeping what
 * the chunk meant at the prompt:
 * - it runs in a `do ... end` block, so its locals stay its own (at the prompt a local does not
 *   outlive its chunk; in one file it would, and 200 of them would not even compile);
 * - a bare expression (`1 + 2`, which is no statement) is evaluated into a local;
 * - a chunk ending in `return` runs in a function of its own, else the replay would stop there.
 */
export function replayableChunk(source: string, compile: Compile): string {
  let body: string;
  if (!compiles(compile, source)) body = `local _ = ${source}`;
  // `return` must end a block: with a statement after it, only a chunk ending in one fails.
  else if (!compiles(compile, `${source}\nlocal _`)) body = `(function(...)\n${source}\nend)(...)`;
  else body = source;
  // A trailing `-- comment` would swallow an `end` on the same line.
  return body.includes('\n') || body.includes('--') ? `do\n${body}\nend` : `do ${body} end`;
}

/** The chunks that succeeded since the session began, in order. */
export class Transcript {
  readonly #chunks: string[] = [];

  add(source: string): void {
    this.#chunks.push(source);
  }

  clear(): void {
    this.#chunks.length = 0;
  }

  get size(): number {
    return this.#chunks.length;
  }

  /** A Lua script that redoes the session's chunks, one `do ... end` block each. */
  render(compile: Compile, header: string): string {
    const blocks = this.#chunks.map((c) => replayableChunk(c, compile));
    return `-- ${header}\n${blocks.map((b) => `${b}\n`).join('')}`;
  }
}

/** Lua skips a first line starting with `#` in files (`#!/usr/bin/env lua`); `load` does not. */
export function withoutShebang(source: string): string {
  return source.startsWith('#') ? source.replace(/^[^\n]*/, '') : source;
}
