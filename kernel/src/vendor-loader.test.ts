import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cachedDataVersionTag } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { compileCommonJs } from './vendor-loader.js';

const cacheOf = (file: string) => `${file}.${cachedDataVersionTag()}.v8-cache`;

function bundle(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'vendor-loader-')), 'lib.cjs');
  writeFileSync(
    file,
    `const { basename } = require('node:path');
     exports.name = basename(__filename);
     exports.same = module.exports === exports;
     exports.square = (n) => n * n;`,
  );
  return file;
}

describe('a vendored CommonJS bundle', () => {
  it('runs as a CommonJS module, then through the code cache it wrote', () => {
    const file = bundle();
    const first = compileCommonJs(file);
    expect(first.exports).toMatchObject({ name: 'lib.cjs', same: true });
    expect((first.exports.square as (n: number) => number)(7)).toBe(49);
    expect(first.cacheUsed).toBe(false);
    first.writeCache();
    expect(existsSync(cacheOf(file))).toBe(true);

    const second = compileCommonJs(file);
    expect(second.cacheUsed).toBe(true);
    expect((second.exports.square as (n: number) => number)(8)).toBe(64);
  });

  it("keeps a variant's cache (a worker thread's) apart from the main one", () => {
    const file = bundle();
    const main = compileCommonJs(file);
    main.writeCache();
    const worker = compileCommonJs(file, 'worker');
    expect(worker.cacheUsed).toBe(false);
    worker.writeCache();
    expect(existsSync(`${file}.${cachedDataVersionTag()}.worker.v8-cache`)).toBe(true);
    expect(compileCommonJs(file, 'worker').cacheUsed).toBe(true);
    expect(compileCommonJs(file).cacheUsed).toBe(true);
  });

  it('loads past a cache V8 refuses, replaces it, and shrugs off one it cannot write', () => {
    const file = bundle();
    writeFileSync(cacheOf(file), 'not a code cache');
    const refused = compileCommonJs(file);
    expect(refused.cacheUsed).toBe(false);
    expect(refused.exports.name).toBe('lib.cjs');
    refused.writeCache();
    expect(readFileSync(cacheOf(file), 'utf8')).not.toBe('not a code cache');
    expect(compileCommonJs(file).cacheUsed).toBe(true);

    // The directory is gone by exit (as root, permissions would not stop the write).
    const lost = bundle();
    const compiled = compileCommonJs(lost);
    rmSync(join(lost, '..'), { recursive: true });
    expect(() => compiled.writeCache()).not.toThrow();
  });
});
