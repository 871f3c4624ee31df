import { mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LogFile } from './log-file.js';
import { createLogger } from './logger.js';

// /dev/full answers every write with ENOSPC: a real full file system, without mounting one.

describe('LogFile', () => {
  it('appends lines and flushes them', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'log-file-')), 'runner.log');
    const file = new LogFile({ path, mode: 0o600, fallback: () => {}, notice: () => {} });
    for (let i = 0; i < 100; i++) file.write(`line ${i}\n`);
    await file.flush();
    expect(readFileSync(path, 'utf8').split('\n')).toHaveLength(101);
  });

  it('sends the lines to its fallback with one notice when the file system is full', async () => {
    const fallback: string[] = [];
    const notices: string[] = [];
    const file = new LogFile({
      path: '/dev/full',
      mode: 0o600,
      fallback: (line) => fallback.push(line),
      notice: (text) => notices.push(text),
      retryMs: 60_000,
    });
    file.write('one\n');
    file.write('two\n');
    await file.flush();
    file.write('three\n');
    await file.flush();
    expect(fallback).toEqual(['one\n', 'two\n', 'three\n']);
    expect(notices).toEqual([
      'runner: cannot write the log file /dev/full (ENOSPC); logging to stderr, trying the file again every 60 s',
    ]);
  });
});

describe('createLogger on a full file system', () => {
  it('shows what the file would have held on the terminal, at the file level, and keeps working', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'log-full-'));
    mkdirSync(join(dataDir, 'logs'));
    symlinkSync('/dev/full', join(dataDir, 'logs', 'runner.log'));
    const terminal = new PassThrough();
    let shown = '';
    terminal.on('data', (chunk: Buffer) => (shown += chunk.toString()));
    const logger = await createLogger({ dataDir, level: 'info', terminal, terminalLevel: 'warn' });
    logger.info('first line');
    await logger.flush();
    logger.info('second line');
    await logger.flush();
    expect(shown).toContain('cannot write the log file');
    expect(shown).toMatch(/INFO +first line/);
    expect(shown).toMatch(/INFO +second line/);
    expect(shown.match(/cannot write the log file/g)).toHaveLength(1);
  });
});
