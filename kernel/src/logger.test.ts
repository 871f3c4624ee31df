// The master's log file is rotated while the process runs, not only at start: a flood of lines
// leaves runner.log and runner.log.1 and no more than about twice the rotation size on disk.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';

const dir = mkdtempSync(join(tmpdir(), 'runner-logger-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('runner.log', () => {
  it('rotates by size while running, keeping one previous file', async () => {
    const rotateBytes = 64 * 1024;
    const logger = await createLogger({ dataDir: dir, level: 'info', rotateBytes });
    await logger.flush();
    const line = 'x'.repeat(200);
    // In turns of the event loop, as a flood arrives (lines of a task come over a channel).
    for (let turn = 0; turn < 50; turn++) {
      for (let i = 0; i < 100; i++) logger.info(`${turn}.${i} ${line}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    logger.info('the last line');
    await logger.flush();
    const file = join(dir, 'logs', 'runner.log');
    expect(existsSync(`${file}.1`)).toBe(true);
    // 5,000 lines of ~260 bytes: 1.3 MB written, at most two files of about the rotation size kept.
    const kept = statSync(file).size + statSync(`${file}.1`).size;
    expect(kept).toBeLessThan(4 * rotateBytes);
    expect(readFileSync(file, 'utf8')).toContain('the last line');
  });

  it('rotates a flood logged in one turn, as lines pile up behind a slow write on a busy machine', async () => {
    const rotateBytes = 64 * 1024;
    const floodDir = mkdtempSync(join(dir, 'flood-'));
    const logger = await createLogger({ dataDir: floodDir, level: 'info', rotateBytes });
    await logger.flush();
    // All 5,000 lines arrive while the first write is under way: they leave in batches of at most
    // the rotation size, not as one 1.3 MB batch written past it.
    for (let i = 0; i < 5000; i++) logger.info(`${i} ${'x'.repeat(200)}`);
    await logger.flush();
    const file = join(floodDir, 'logs', 'runner.log');
    expect(statSync(file).size + statSync(`${file}.1`).size).toBeLessThan(4 * rotateBytes);
  });
});
