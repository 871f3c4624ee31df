import type { TaskLogLine } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { textUnit } from './log-units.js';

const line = (message: string, fields?: Record<string, unknown>): TaskLogLine => ({
  timestamp: '2026-11-25T12:00:00.000Z',
  level: 'info',
  message,
  ...(fields ? { fields } : {}),
});

/** Every way of reading the unit gives the lines as stored. */
function readsBack(lines: TaskLogLine[]) {
  const unit = textUnit('t', 'a', JSON.stringify(lines));
  expect(unit.count).toBe(lines.length);
  expect(lines.map((_, i) => unit.line(i))).toEqual(lines);
  expect(unit.lines()).toEqual(lines);
}

describe('a stored log read line by line', () => {
  it('finds each line without parsing the others', () => {
    readsBack(Array.from({ length: 1000 }, (_, i) => line(`line ${i}`)));
    readsBack([]);
  });

  it('is not misled by the sequence inside a message or in fields', () => {
    readsBack([
      line('a message quoting {"timestamp":"x"} and },{"timestamp":"y"}'),
      line('nested', { event: { timestamp: 'z', level: 'info' } }),
      line('after'),
    ]);
  });

  it('reads the whole text when fields hold a list of such objects', () => {
    readsBack([line('list', { items: [{ timestamp: '1' }, { timestamp: '2' }] }), line('next')]);
  });

  it('reads the whole text when lines are written another way', () => {
    const unit = textUnit('t', 'a', JSON.stringify([{ level: 'info', message: 'm', timestamp: 't' }]));
    expect(unit.count).toBe(1);
    expect(unit.line(0)).toEqual({ level: 'info', message: 'm', timestamp: 't' });
  });
});
