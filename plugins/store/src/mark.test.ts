import { readFileSync, statSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { recordingLogger } from '../test-fixtures/recording-logger.js';
import { storeWithHistory } from '../test-fixtures/store-with-history.js';
import { readMark } from './mark.js';
import { openStore } from './sql-store.js';

async function refusal(dataDir: string): Promise<Error & { code?: string; details?: Record<string, unknown> }> {
  const error = await openStore(dataDir, recordingLogger()).then(
    (store) => store.close().then(() => new Error('opened')),
    (e: Error) => e,
  );
  return error;
}

describe('the mark', () => {
  it('follows the snapshot and the acknowledged journal', async () => {
    const { layout } = await storeWithHistory('store-mark-');
    const mark = await readMark(layout);
    expect(mark).toMatchObject({ snapshot: { seq: 101 }, journal: { generation: 2, ackedSeq: 201 } });
    expect(mark?.snapshot?.bytes).toBe(statSync(layout.snapshot).size);
    expect(mark?.pending).toBeUndefined();
  });

  it('refuses a journal cut to half, naming the file and the records lost, and changes no file', async () => {
    const { dataDir, layout } = await storeWithHistory('store-mark-');
    const path = layout.journal(2);
    truncateSync(path, Math.floor(statSync(path).size / 2));
    const cut = readFileSync(path);
    const error = await refusal(dataDir);
    expect(error).toMatchObject({ code: 'store_damaged', details: { path, lostTo: 201 } });
    expect(error.message).toMatch(
      new RegExp(`store file ${path}: it ends at record 1\\d\\d, .* records 1\\d\\d..201 are lost`),
    );
    expect(readFileSync(path)).toEqual(cut);
  });

  it('refuses a journal cut to zero', async () => {
    const { dataDir, layout } = await storeWithHistory('store-mark-');
    truncateSync(layout.journal(2), 0);
    const error = await refusal(dataDir);
    expect(error.message).toContain('it ends at record 101');
    expect(error.message).toContain('records 102..201 are lost');
  });

  it('refuses a deleted journal', async () => {
    const { dataDir, layout } = await storeWithHistory('store-mark-');
    unlinkSync(layout.journal(2));
    const error = await refusal(dataDir);
    expect(error.message).toContain(`store file ${layout.journal(2)}: it is missing and no journal file is left`);
    expect(error.message).toContain('records 102..201 are lost');
  });

  it('refuses a snapshot with garbage inside', async () => {
    const { dataDir, layout } = await storeWithHistory('store-mark-');
    const image = readFileSync(layout.snapshot);
    image.fill(0x5a, 4096, 8192);
    writeFileSync(layout.snapshot, image);
    const error = await refusal(dataDir);
    expect(error).toMatchObject({ code: 'store_damaged', details: { path: layout.snapshot } });
    expect(error.message).toContain('matches neither the snapshot');
  });

  it('refuses a deleted snapshot that the mark names', async () => {
    const { dataDir, layout } = await storeWithHistory('store-mark-');
    unlinkSync(layout.snapshot);
    expect((await refusal(dataDir)).message).toContain('it is missing, but');
  });

  it('accepts the snapshot being installed when the crash came between its rename and the next mark', async () => {
    const { dataDir, layout } = await storeWithHistory('store-mark-');
    const before = readFileSync(layout.mark);
    const store = await openStore(dataDir, recordingLogger());
    await store.snapshot();
    await store.close({ snapshot: false });
    // The new image with a mark naming it only as pending: what the crash would have left.
    const after = JSON.parse(readFileSync(layout.mark, 'utf8'));
    const old = JSON.parse(before.toString());
    writeFileSync(layout.mark, JSON.stringify({ ...old, pending: after.snapshot }));
    const again = await openStore(dataDir, recordingLogger());
    expect(await again.get('SELECT count(*) AS n FROM items')).toEqual({ n: 200 });
    await again.close();
  });

  it('accepts a torn last record past what the mark saw acknowledged', async () => {
    const { dataDir, layout } = await storeWithHistory('store-mark-');
    const mark = readFileSync(layout.mark);
    const store = await openStore(dataDir, recordingLogger());
    await store.run("INSERT INTO items (name) VALUES ('unmarked')");
    await store.close({ snapshot: false });
    writeFileSync(layout.mark, mark);
    truncateSync(layout.journal(2), statSync(layout.journal(2)).size - 5);
    const again = await openStore(dataDir, recordingLogger());
    expect(await again.get('SELECT count(*) AS n FROM items')).toEqual({ n: 200 });
    await again.close();
  });

  it('is not needed for a data directory from before marks', async () => {
    const { dataDir, layout } = await storeWithHistory('store-mark-');
    unlinkSync(layout.mark);
    const store = await openStore(dataDir, recordingLogger());
    expect(await store.get('SELECT count(*) AS n FROM items')).toEqual({ n: 200 });
    await store.close();
    expect(await readMark(layout)).toMatchObject({ journal: { ackedSeq: 201 } });
  });

  it('refuses an unreadable mark', async () => {
    const { dataDir, layout } = await storeWithHistory('store-mark-');
    writeFileSync(layout.mark, '{"version":');
    expect((await refusal(dataDir)).message).toContain(`${layout.mark} is unreadable`);
  });
});
