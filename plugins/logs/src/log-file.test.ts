import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { follow, parseLine, readEntries, type LogEntry } from './log-file.js';

const at = (iso: string, level: string, message: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ level, timestamp: iso, ...extra, message });

describe('the log file', () => {
  it('parses a line into timestamp, level, message and the other keys as fields', () => {
    expect(parseLine(at('2026-01-01T00:00:00.000Z', 'warn', 'disk low', { plugin: 'dashboard' }))).toEqual({
      timestamp: '2026-01-01T00:00:00.000Z',
      level: 'warn',
      message: 'disk low',
      fields: { plugin: 'dashboard' },
    });
    expect(parseLine('{"half')).toBeUndefined();
    expect(parseLine('plain text')).toBeUndefined();
  });

  it('filters by level and age, keeps the latest `limit`, reads the rotated file first', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-logs-'));
    const now = Date.now();
    const iso = (agoMs: number) => new Date(now - agoMs).toISOString();
    writeFileSync(join(dir, 'runner.log.1'), `${at(iso(7200_000), 'error', 'old error')}\n`);
    writeFileSync(
      join(dir, 'runner.log'),
      [
        at(iso(600_000), 'info', 'ten minutes ago'),
        at(iso(300_000), 'debug', 'debug five minutes ago'),
        at(iso(60_000), 'error', 'a minute ago'),
        at(iso(1000), 'warn', 'just now'),
        '{"partial',
      ].join('\n'),
    );
    const files = [join(dir, 'runner.log.1'), join(dir, 'runner.log')];
    const all = await readEntries(files, { limit: 100 });
    expect(all.entries.map((e) => e.message)).toEqual([
      'old error',
      'ten minutes ago',
      'debug five minutes ago',
      'a minute ago',
      'just now',
    ]);
    expect(all.truncated).toBe(false);
    const warn = await readEntries(files, { level: 'warn', limit: 100 });
    expect(warn.entries.map((e) => e.message)).toEqual(['old error', 'a minute ago', 'just now']);
    const recent = await readEntries(files, { sinceMs: now - 400_000, limit: 100 });
    expect(recent.entries.map((e) => e.message)).toEqual(['debug five minutes ago', 'a minute ago', 'just now']);
    const latest = await readEntries(files, { limit: 2 });
    expect(latest).toEqual({ entries: expect.any(Array), truncated: true });
    expect(latest.entries.map((e) => e.message)).toEqual(['a minute ago', 'just now']);
  });

  it('follows new complete lines, also after the file is rotated', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-logs-'));
    const file = join(dir, 'runner.log');
    writeFileSync(file, `${at('2026-01-01T00:00:00.000Z', 'info', 'before')}\n`);
    const seen: LogEntry[] = [];
    const stop = new AbortController();
    const done = follow(file, (e) => seen.push(e), stop.signal, 20);
    await sleep(60);
    appendFileSync(
      file,
      `${at('2026-01-01T00:00:01.000Z', 'info', 'first')}\n{"level":"info","timestamp":"2026-01-01T00:00:02.000Z",`,
    );
    await sleep(80);
    expect(seen.map((e) => e.message)).toEqual(['first']);
    appendFileSync(file, `"message":"second"}\n`);
    await sleep(80);
    writeFileSync(file, `${at('2026-01-01T00:00:03.000Z', 'error', 'after rotation')}\n`);
    await sleep(80);
    stop.abort();
    await done;
    expect(seen.map((e) => e.message)).toEqual(['first', 'second', 'after rotation']);
  });
});
