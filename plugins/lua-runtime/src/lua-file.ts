// A file as the io library's scripts see it (Lua 5.3's liolib.c FILE* semantics): position, read
// buffer and byte reads over one of the backends of io-backends.ts; lib-io.ts parses the formats.
import { systemError, type Backend } from './io-backends.js';
import { concatBytes } from './lua-strings.js';

/** Bytes read from a backend at a time. */
export const CHUNK = 64 * 1024;
/** What `read` takes: a byte count, or `n` (a numeral), `l`/`L` (a line without/with its end), `a` (all). */
export type ReadFormat = number | 'n' | 'l' | 'L' | 'a';

/** An open (or closed) file as Lua sees it: a position, a read buffer, a backend. */
export class LuaFile {
  static #nextId = 1;
  readonly id = LuaFile.#nextId++;
  readonly backend: Backend;
  /** stdin/stdout/stderr: `close` refuses. */
  readonly standard: boolean;
  closed = false;
  #cursor = 0;
  #chunk = new Uint8Array(0);
  #chunkStart = 0;
  #chunkLength = 0;

  constructor(backend: Backend, standard = false) {
    this.backend = backend;
    this.standard = standard;
  }

  closeQuietly(): void {
    if (this.closed || this.standard) return;
    this.closed = true;
    this.backend.closeQuietly();
  }

  /** Makes the byte at the cursor available; false at end of file. */
  #fill(): boolean {
    if (this.#cursor >= this.#chunkStart && this.#cursor < this.#chunkStart + this.#chunkLength) return true;
    if (this.#chunk.length === 0) this.#chunk = new Uint8Array(CHUNK);
    this.#chunkStart = this.#cursor;
    this.#chunkLength = 0;
    this.#chunkLength = this.backend.read(this.#chunk, CHUNK, this.#cursor);
    return this.#chunkLength > 0;
  }

  getc(): number {
    if (!this.#fill()) return -1;
    return this.#chunk[this.#cursor++ - this.#chunkStart];
  }

  /** Steps back over the byte `getc` just returned (still in the buffer). */
  ungetc(): void {
    this.#cursor--;
  }

  atEof(): boolean {
    return !this.#fill();
  }

  readLine(keepNewline: boolean): Uint8Array | null {
    const parts: Uint8Array[] = [];
    let total = 0;
    let sawNewline = false;
    while (this.#fill()) {
      const offset = this.#cursor - this.#chunkStart;
      const view = this.#chunk.subarray(offset, this.#chunkLength);
      const nl = view.indexOf(10);
      if (nl >= 0) {
        const piece = view.slice(0, keepNewline ? nl + 1 : nl);
        parts.push(piece);
        total += piece.length;
        this.#cursor += nl + 1;
        sawNewline = true;
        break;
      }
      parts.push(view.slice());
      total += view.length;
      this.#cursor += view.length;
    }
    if (!sawNewline && total === 0) return null;
    return concatBytes(parts, total);
  }

  readChars(n: number): Uint8Array | null {
    const parts: Uint8Array[] = [];
    let total = 0;
    while (total < n && this.#fill()) {
      const offset = this.#cursor - this.#chunkStart;
      const take = Math.min(n - total, this.#chunkLength - offset);
      parts.push(this.#chunk.slice(offset, offset + take));
      total += take;
      this.#cursor += take;
    }
    return total === 0 ? null : concatBytes(parts, total);
  }

  readAll(): Uint8Array {
    const parts: Uint8Array[] = [];
    let total = 0;
    while (this.#fill()) {
      const offset = this.#cursor - this.#chunkStart;
      parts.push(this.#chunk.slice(offset, this.#chunkLength));
      total += this.#chunkLength - offset;
      this.#cursor = this.#chunkStart + this.#chunkLength;
    }
    return parts.length === 0 ? new Uint8Array(0) : concatBytes(parts, total);
  }

  write(data: Uint8Array): void {
    // Whatever was read ahead may be overwritten now.
    this.#chunkLength = 0;
    this.#cursor = this.backend.write(data, this.#cursor);
  }

  seek(whence: 'set' | 'cur' | 'end', offset: number): number {
    if (!this.backend.seekable) throw systemError('ESPIPE');
    const base = whence === 'set' ? 0 : whence === 'cur' ? this.#cursor : this.backend.size();
    const position = base + offset;
    if (position < 0) throw systemError('EINVAL');
    this.#cursor = position;
    return position;
  }
}
