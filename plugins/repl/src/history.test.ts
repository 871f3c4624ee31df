import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HistoryFile } from './history.js';
import { tempDir } from './test-support.js';

describe('HistoryFile', () => {
  it('has no entries before the first line', () => {
    expect(new HistoryFile(join(tempDir(), 'repl_history')).load()).toEqual([]);
  });

  it('appends lines, skipping blank ones, in a file only its owner reads', () => {
    const path = join(tempDir(), 'sub', 'repl_history');
    const history = new HistoryFile(path);
    for (const line of ['a = 1', '   ', 'a', 'a = 1']) expect(history.append(line)).toBeUndefined();
    expect(readFileSync(path, 'utf8')).toBe('a = 1\na\na = 1\n');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    // Newest first for readline, each line once (its latest use counts).
    expect(history.load()).toEqual(['a = 1', 'a']);
  });

  it('keeps the newest entries and trims the file to them', () => {
    const path = join(tempDir(), 'repl_history');
    writeFileSync(path, Array.from({ length: 12 }, (_, i) => `line ${i}\n`).join(''));
    expect(new HistoryFile(path, 3).load()).toEqual(['line 11', 'line 10', 'line 9']);
    expect(readFileSync(path, 'utf8')).toBe('line 9\nline 10\nline 11\n');
  });

  it('reports once, without throwing, when the file cannot be written', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'file'), '');
    const history = new HistoryFile(join(dir, 'file', 'repl_history'));
    expect(history.append('x')).toMatch(/^cannot write the history file .*repl_history: /);
    expect(history.append('y')).toBeUndefined();
  });
});
