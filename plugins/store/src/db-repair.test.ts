import { existsSync, readdirSync, readFileSync, statSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordingLogger } from '../test-fixtures/recording-logger.js';
import { storeWithHistory } from '../test-fixtures/store-with-history.js';
import { formatRepairReport, repairStore } from './db-repair.js';
import { RECORD_HEADER_BYTES } from './journal.js';
import { openStore } from './sql-store.js';

async function countAfterRepair(dataDir: string): Promise<number> {
  const store = await openStore(dataDir, recordingLogger());
  try {
    return ((await store.get<{ n: number }>('SELECT count(*) AS n FROM items')) as { n: number }).n;
  } finally {
    await store.close();
  }
}

describe('runner db repair', () => {
  it('changes nothing when every file is intact', async () => {
    const { dataDir, layout } = await storeWithHistory('store-repair-');
    const before = readdirSync(layout.dir).sort();
    const report = await repairStore(dataDir, recordingLogger());
    expect(report).toMatchObject({ repaired: false, seq: 201, snapshot: { state: 'intact', seq: 101 } });
    expect(readdirSync(layout.dir).sort()).toEqual(before);
    expect(formatRepairReport(report)).toContain('every file is intact: nothing to repair');
  });

  it('keeps the records before a journal cut to half and names those lost; the store then opens', async () => {
    const { dataDir, layout } = await storeWithHistory('store-repair-');
    const path = layout.journal(2);
    truncateSync(path, Math.floor(statSync(path).size / 2));
    const report = await repairStore(dataDir, recordingLogger());
    const kept = report.seq;
    expect(kept).toBeGreaterThan(101);
    expect(kept).toBeLessThan(201);
    expect(report.journals).toEqual([
      expect.objectContaining({
        path,
        applied: { from: 102, to: kept },
        dropped: expect.objectContaining({ records: null }),
      }),
    ]);
    expect(report.missing).toEqual({ from: kept + 1, to: 201 });
    const text = formatRepairReport(report);
    expect(text).toContain(`${path}: applied records 102..${kept}`);
    expect(text).toContain(`lost: records ${kept + 1}..201, acknowledged per mark.json`);
    expect(existsSync(join(report.movedTo as string, 'journal-00000002.log'))).toBe(true);
    expect(await countAfterRepair(dataDir)).toBe(kept - 1);
  });

  it('keeps the snapshot when the journal was deleted', async () => {
    const { dataDir, layout } = await storeWithHistory('store-repair-');
    unlinkSync(layout.journal(2));
    const report = await repairStore(dataDir, recordingLogger());
    expect(report).toMatchObject({ repaired: true, seq: 101, missing: { from: 102, to: 201 } });
    expect(await countAfterRepair(dataDir)).toBe(100);
  });

  it('drops the records from a damaged one on and says which', async () => {
    const { dataDir, layout } = await storeWithHistory('store-repair-');
    const path = layout.journal(2);
    const data = readFileSync(path);
    let offset = 0;
    for (let i = 0; i < 10; i++) offset += RECORD_HEADER_BYTES + data.readUInt32LE(offset);
    data[offset + RECORD_HEADER_BYTES + 2] ^= 0x20; // the 11th record of the journal: 112
    writeFileSync(path, data);
    const report = await repairStore(dataDir, recordingLogger());
    expect(report.journals[0]).toMatchObject({
      applied: { from: 102, to: 111 },
      dropped: { offset, reason: 'checksum mismatch', records: { from: 113, to: 201 } },
    });
    expect(formatRepairReport(report)).toContain(`applied records 102..111; dropped records 113..201`);
    expect(await countAfterRepair(dataDir)).toBe(110);
  });

  it('reads a snapshot with garbage inside table by table and reports each', async () => {
    const { dataDir, layout } = await storeWithHistory('store-repair-');
    const image = readFileSync(layout.snapshot);
    image.fill(0x5a, image.length - 4096, image.length);
    writeFileSync(layout.snapshot, image);
    const report = await repairStore(dataDir, recordingLogger());
    expect(report.snapshot.state).toBe('damaged');
    const names = (report.snapshot.tables ?? []).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['_store_meta', '_migrations', 'items']));
    const text = formatRepairReport(report);
    expect(text).toContain('damaged (its SHA-256 differs');
    expect(text).toMatch(/items +\d+ rows/);
    // The master starts on what was kept.
    const store = await openStore(dataDir, recordingLogger());
    await store.close();
  });

  it('is refused while a process holds the data directory', async () => {
    const { dataDir } = await storeWithHistory('store-repair-');
    const store = await openStore(dataDir, recordingLogger());
    try {
      await expect(repairStore(dataDir, recordingLogger())).rejects.toMatchObject({ code: 'conflict' });
    } finally {
      await store.close();
    }
  });

  it('reports without changing anything on a dry run', async () => {
    const { dataDir, layout } = await storeWithHistory('store-repair-');
    unlinkSync(layout.journal(2));
    const report = await repairStore(dataDir, recordingLogger(), { dryRun: true });
    expect(report).toMatchObject({ repaired: false, dryRun: true, missing: { from: 102, to: 201 } });
    expect(formatRepairReport(report)).toContain('dry run: a repair would keep every record up to 101');
    await expect(openStore(dataDir, recordingLogger())).rejects.toMatchObject({ code: 'store_damaged' });
  });
});
