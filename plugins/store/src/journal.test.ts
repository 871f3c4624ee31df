import { mkdtempSync } from 'node:fs';
import { closeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidInputError, RunnerError } from '@runner/plugin-sdk';
import {
  decodeEntry,
  encodeEntry,
  encodeRecord,
  JournalWriter,
  openFd,
  RECORD_HEADER_BYTES,
  scanJournal,
  type JournalEntry,
  type JournalRecord,
} from './journal.js';

function entry(n: number): JournalEntry {
  return { mode: 'run', statements: [{ sql: 'INSERT INTO t (v) VALUES (?)', params: [n] }] };
}

function journalOf(first: number, count: number): { data: Buffer; offsets: number[] } {
  const records = Array.from({ length: count }, (_, i) => encodeRecord(first + i, encodeEntry(entry(first + i))));
  const offsets: number[] = [];
  let at = 0;
  for (const r of records) {
    offsets.push(at);
    at += r.length;
  }
  return { data: Buffer.concat(records), offsets };
}

function scan(data: Buffer, afterSeq = 0): { records: JournalRecord[]; result: ReturnType<typeof scanJournal> } {
  const records: JournalRecord[] = [];
  const result = scanJournal('/j/journal.log', data, afterSeq, (r) => records.push(r));
  return { records, result };
}

describe('journal entries', () => {
  it('round-trip every parameter type, including those JSON cannot carry', () => {
    const blob = new Uint8Array([0, 1, 254, 255]);
    const original: JournalEntry = {
      mode: 'tx',
      statements: [
        {
          sql: 'INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
          params: ['text', 1.5, 2n ** 63n - 1n, blob, null, NaN, -0, -Infinity],
        },
        { sql: 'UPDATE t SET v = :v WHERE id = :id', params: { ':v': 9007199254740993n, ':id': 'x' } },
        { sql: 'CREATE TABLE a (x); CREATE TABLE b (y)', script: true },
      ],
    };
    const decoded = decodeEntry(encodeEntry(original));
    const values = decoded.statements[0].params as unknown[];
    expect(values.slice(0, 3)).toEqual(['text', 1.5, 2n ** 63n - 1n]);
    expect(values[3]).toBeInstanceOf(Uint8Array);
    expect([...(values[3] as Uint8Array)]).toEqual([0, 1, 254, 255]);
    expect(values[4]).toBeNull();
    expect(values[5]).toBeNaN();
    expect(Object.is(values[6], -0)).toBe(true);
    expect(values[7]).toBe(-Infinity);
    expect(decoded.statements[1].params).toEqual({ ':v': 9007199254740993n, ':id': 'x' });
    expect(decoded.statements[2]).toEqual({ sql: 'CREATE TABLE a (x); CREATE TABLE b (y)', script: true });
    expect(decoded.mode).toBe('tx');
  });

  it('refuses a parameter the journal cannot replay, naming it', () => {
    const bad: JournalEntry = { mode: 'run', statements: [{ sql: 'SELECT ?', params: [1, undefined as never] }] };
    expect(() => encodeEntry(bad)).toThrow(InvalidInputError);
    expect(() => encodeEntry(bad)).toThrow(/statements\[0\]\.params\[1\] is undefined/);
    const object: JournalEntry = { mode: 'run', statements: [{ sql: 'SELECT :a', params: { ':a': {} as never } }] };
    expect(() => encodeEntry(object)).toThrow(/params\.:a is an object/);
  });
});

describe('scanJournal', () => {
  it('reads records in order', () => {
    const { data } = journalOf(7, 5);
    const { records, result } = scan(data, 6);
    expect(records.map((r) => r.seq)).toEqual([7, 8, 9, 10, 11]);
    expect(records[2].entry).toEqual(entry(9));
    expect(result).toEqual({ records: 5, validBytes: data.length, torn: null });
  });

  it('reports a torn last record wherever the file was cut', () => {
    const { data, offsets } = journalOf(1, 4);
    const last = offsets[3];
    for (const cut of [last + 1, last + RECORD_HEADER_BYTES - 1, last + RECORD_HEADER_BYTES + 3, data.length - 1]) {
      const { records, result } = scan(data.subarray(0, cut));
      expect(records.map((r) => r.seq)).toEqual([1, 2, 3]);
      expect(result.validBytes).toBe(last);
      expect(result.torn?.offset).toBe(last);
    }
  });

  it('treats a zero-filled tail as torn, not as corruption', () => {
    const { data } = journalOf(1, 3);
    const { records, result } = scan(Buffer.concat([data, Buffer.alloc(4096)]));
    expect(records).toHaveLength(3);
    expect(result.torn).toEqual({ offset: data.length, reason: 'checksum mismatch' });
  });

  it('treats a checksum failure in the last record as torn', () => {
    const { data, offsets } = journalOf(1, 3);
    const damaged = Buffer.from(data);
    damaged[offsets[2] + RECORD_HEADER_BYTES + 2] ^= 0xff;
    const { result } = scan(damaged);
    expect(result.torn).toEqual({ offset: offsets[2], reason: 'checksum mismatch' });
  });

  it('refuses damage followed by intact records, naming the file and offset', () => {
    const { data, offsets } = journalOf(1, 5);
    const damaged = Buffer.from(data);
    damaged[offsets[2] + RECORD_HEADER_BYTES + 4] ^= 0x01;
    let error: unknown;
    try {
      scan(damaged);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RunnerError);
    expect((error as RunnerError).code).toBe('journal_corrupt');
    expect((error as Error).message).toContain(`journal /j/journal.log is corrupt at offset ${offsets[2]}`);
  });

  it('refuses a damaged length field that would otherwise swallow the records after it', () => {
    const { data, offsets } = journalOf(1, 5);
    const damaged = Buffer.from(data);
    damaged.writeUInt32LE(1_000_000, offsets[1]);
    expect(() => scan(damaged)).toThrow(/corrupt at offset/);
  });

  it('refuses a gap in sequence numbers', () => {
    const a = journalOf(1, 2).data;
    const b = journalOf(4, 1).data;
    expect(() => scan(Buffer.concat([a, b]))).toThrow(/sequence 4 follows 2/);
  });
});

describe('JournalWriter', () => {
  async function writerOn(path: string) {
    const fd = await openFd(path, 'wx');
    const writer = new JournalWriter(
      { fd, path, generation: 1, size: 0 },
      (error) => new RunnerError('store_failed', String(error)),
      () => undefined,
    );
    return { fd, writer };
  }

  it('writes records issued together with one fdatasync, and those arriving during it with the next', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'store-journal-')), 'j.log');
    const { writer } = await writerOn(path);
    const first = Array.from({ length: 100 }, (_, i) => writer.append(encodeRecord(i + 1, encodeEntry(entry(i + 1)))));
    await Promise.all(first);
    expect(writer.flushes).toBe(1);

    const lone = writer.append(encodeRecord(101, encodeEntry(entry(101))));
    // Issued on later ticks while the flush of 101 is in flight: they must share one flush.
    const during: Promise<void>[] = [];
    for (let i = 0; i < 50; i++) {
      await null;
      during.push(writer.append(encodeRecord(102 + i, encodeEntry(entry(102 + i)))));
    }
    await Promise.all([lone, ...during]);
    // 100 together, then 101 alone, then the 50 that arrived while 101 was being synced.
    expect(writer.flushes).toBe(3);
    await writer.close();

    const { records, result } = scan(await readFile(path));
    expect(result.torn).toBeNull();
    expect(records.map((r) => r.seq)).toEqual(Array.from({ length: 151 }, (_, i) => i + 1));
  });

  it('fails every later write once a write fails', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'store-journal-')), 'j.log');
    const { fd, writer } = await writerOn(path);
    await writer.append(encodeRecord(1, encodeEntry(entry(1))));
    closeSync(fd); // the next write hits EBADF
    await expect(writer.append(encodeRecord(2, encodeEntry(entry(2))))).rejects.toThrow(/EBADF|closed/);
    expect(writer.failed).toBe(true);
    await expect(writer.append(encodeRecord(3, encodeEntry(entry(3))))).rejects.toThrow();
  });
});
