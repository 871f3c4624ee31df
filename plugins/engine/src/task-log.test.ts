// A task's log bounds what reaches the master's own log (the mirror), not only the run record.
import type { Logger } from '@runner/plugin-sdk';
import { expect, it } from 'vitest';
import { createTaskLog } from './task-log.js';

it('mirrors to the process log only the lines it keeps, and the note once', () => {
  const mirrored: string[] = [];
  const record = (level: string) => (message: string) => void mirrored.push(`${level} ${message}`);
  const mirror: Logger = {
    debug: record('debug'),
    info: record('info'),
    warn: record('warn'),
    error: record('error'),
    child: () => mirror,
  };
  const log = createTaskLog(1000, () => {}, mirror);
  for (let i = 0; i < 100_000; i++) log.logger.info(`line ${i}`);
  expect(log.truncated).toBe(true);
  const kept = log.lines.length - 1;
  expect(kept).toBeGreaterThan(10);
  expect(kept).toBeLessThan(25);
  expect(mirrored).toHaveLength(kept + 1);
  expect(mirrored.at(-1)).toBe('warn log truncated at 1000 bytes; later lines are not kept');
});
