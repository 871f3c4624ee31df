import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export const HISTORY_SIZE = 1000;

/**
 * The REPL's line history in a file: one line per entry, oldest first, so that sessions running at
 * the same time each append theirs instead of overwriting the others'. The file is trimmed to the
 * newest `size` entries when a session starts.
 */
export class HistoryFile {
  readonly path: string;
  readonly size: number;
  #broken = false;

  constructor(path: string, size = HISTORY_SIZE) {
    this.path = path;
    this.size = size;
  }

  /** Entries newest first, as readline's `history` option wants them, without repeats. */
  load(): string[] {
    let lines: string[];
    try {
      lines = readFileSync(this.path, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const newestFirst: string[] = [];
    const seen = new Set<string>();
    for (let i = lines.length - 1; i >= 0 && newestFirst.length < this.size; i--) {
      if (seen.has(lines[i])) continue;
      seen.add(lines[i]);
      newestFirst.push(lines[i]);
    }
    if (lines.length > newestFirst.length) this.#rewrite([...newestFirst].reverse());
    return newestFirst;
  }

  /** Records one entered line. A history that cannot be written must not stop the REPL. */
  append(line: string): string | undefined {
    if (this.#broken || line.trim() === '') return undefined;
    try {
      mkdirSync(dirname(this.path), { recursive: true });
      appendFileSync(this.path, `${line}\n`, { mode: 0o600 });
      return undefined;
    } catch (error) {
      this.#broken = true;
      return `cannot write the history file ${this.path}: ${(error as Error).message}`;
    }
  }

  #rewrite(oldestFirst: string[]): void {
    // Through a temporary file and a rename, so a crash never leaves half a history.
    const temporary = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temporary, oldestFirst.map((l) => `${l}\n`).join(''), { mode: 0o600 });
    renameSync(temporary, this.path);
  }
}
