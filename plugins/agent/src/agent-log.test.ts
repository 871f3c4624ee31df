import { describe, expect, it } from 'vitest';
import type { Logger } from '@runner/plugin-sdk';
import type { LogEntry } from '@runner/proto';
import { AgentLog } from './agent-log.js';

describe("the agent's own log", () => {
  it('keeps recent lines, feeds followers, passes every line on, redacts secrets', () => {
    const passed: string[] = [];
    const base: Logger = {
      debug: (m) => passed.push(m),
      info: (m) => passed.push(m),
      warn: (m) => passed.push(m),
      error: (m) => passed.push(m),
      child: () => base,
    };
    const log = new AgentLog(3);
    const logger = log.wrap(base);
    const followed: LogEntry[] = [];
    const off = log.follow((e) => followed.push(e));
    logger.info('one');
    logger.child({ task: 't' }).warn('two', { token: 'secret!' });
    off();
    logger.error('three');
    logger.debug('four');
    expect(passed).toEqual(['one', 'two', 'three', 'four']);
    expect(followed.map((e) => e.message)).toEqual(['one', 'two']);
    expect(followed[1]).toMatchObject({ level: 'LOG_LEVEL_WARN', fields_json: '{"task":"t","token":"***"}' });
    expect(log.recent(10).map((e) => e.message)).toEqual(['two', 'three', 'four']);
    expect(log.recent(1).map((e) => e.message)).toEqual(['four']);
    expect(log.recent(0)).toEqual([]);
  });
});
