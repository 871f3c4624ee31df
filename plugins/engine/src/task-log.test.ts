// A task's log bounds what reaches the master's own log (the mirror), not only the run record.
import type { Logger } from '@runner/plugin-sdk';
import { expect, it } from 'vitest';
import { createTaskLog, runLogBudget } from './task-log.js';

function recorder(): { mirror: Logger; mirrored: string[] } {
  const mirrored: string[] = [];
  const make = (bound: string): Logger => {
    const record = (level: string) => (message: string) => void mirrored.push(`${level}${bound} ${message}`);
    return {
      debug: record('debug'),
      info: record('info'),
      warn: record('warn'),
      error: record('error'),
      child: (fields) => make(`${bound} ${Object.values(fields).join(' ')}`),
    };
  };
  return { mirror: make(''), mirrored };
}

it('mirrors to the process log only the lines it keeps, and the note once', () => {
  const { mirror, mirrored } = recorder();
  const log = createTaskLog(1000, () => {}, mirror);
  for (let i = 0; i < 100_000; i++) log.logger.info(`line ${i}`);
  expect(log.truncated).toBe(true);
  const kept = log.lines.length - 1;
  expect(kept).toBeGreaterThan(10);
  expect(kept).toBeLessThan(25);
  expect(mirrored).toHaveLength(kept + 1);
  expect(mirrored.at(-1)).toBe('warn log truncated at 1000 bytes; later lines are not kept');
});

it("bounds what all of a run's tasks write to the process log together, saying so once", () => {
  const { mirror, mirrored } = recorder();
  const budget = runLogBudget(mirror, 10_000);
  // Ten tasks, each under its own cap of 4,000 bytes: 40,000 bytes kept in the record.
  for (let task = 0; task < 10; task++) {
    const log = createTaskLog(4000, () => {}, budget.mirror({ task: `t${task}` }));
    for (let i = 0; i < 1000; i++) log.logger.info(`line ${i}`);
  }
  const lines = mirrored.filter((line) => line.startsWith('info'));
  expect(lines.join('\n').length).toBeLessThan(10_000);
  expect(lines[0]).toBe('info t0 line 0');
  const notes = mirrored.filter((line) => line.includes('engine.run_log_bytes'));
  expect(notes).toEqual([
    "warn task log lines of this run past 10000 bytes are not written to the master's log (engine.run_log_bytes); the run record keeps them",
  ]);
  expect(budget.dropped()).toBeGreaterThan(300);
});
