import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunProgress, RunRecord } from '@runner/plugin-sdk';
import { bootEngine, workflow, type EngineHarness } from './workflow-helpers.js';

/**
 * What readers of a run (GET /api/v1/executions/:id, the CLI following a master's run) see while
 * it goes on. The engine writes a unit's record once, when it ends, and the store takes the
 * records of a turn in one transaction; until then the engine and the store show them from memory.
 */

let h: EngineHarness;
beforeAll(async () => {
  h = await bootEngine();
});
afterAll(async () => {
  await h?.stop();
});

const text = workflow(`
parallel: 1
tasks:
  - name: first
    exec:
      script: return true, "first done", { n = 1 }
  - name: second
    loop: [a]
    exec:
      script: |
        log.info("second is running", { item = item })
        return true
`);

describe('a run read while it goes on', () => {
  it('shows a finished unit at once and a running one with its attempts and log so far', async () => {
    const file = h.write('live-records', text);
    const reads: Record<string, Promise<RunRecord | undefined>> = {};
    const observe = (p: RunProgress) => {
      // Called synchronously by the engine: each read is taken at that exact point of the run.
      if (p.kind === 'task' && p.task.name === 'first' && p.task.status === 'succeeded')
        reads.firstDone = h.engine.get(p.runId);
      if (p.kind === 'task' && p.task.name === 'second[a]' && p.task.status === 'running')
        reads.secondStarted = h.engine.get(p.runId);
      if (p.kind === 'log' && p.line.message === 'second is running') reads.secondLogged = h.engine.get(p.runId);
    };
    const { runId, done } = await h.engine.start({ source: { file }, workflowName: 'live-records' }, observe);
    const record = await done;
    const seen: Record<string, RunRecord | undefined> = {};
    for (const [name, read] of Object.entries(reads)) seen[name] = await read;

    const first = {
      name: 'first',
      task: 'first',
      agent: 'localhost',
      status: 'succeeded',
      attempts: 1,
      message: 'first done',
      outputs: { n: 1 },
      log: [],
    };
    // Announced as done before the turn's write went to the store: read all the same.
    expect(seen.firstDone?.status).toBe('running');
    // The task not started yet is listed as pending (n of N tasks), not left out.
    expect(seen.firstDone?.tasks).toEqual([
      expect.objectContaining(first),
      expect.objectContaining({ name: 'second', status: 'pending', attempts: 0 }),
    ]);
    expect(seen.secondStarted?.tasks).toEqual([
      expect.objectContaining(first),
      expect.objectContaining({ name: 'second[a]', item: 'a', status: 'running', attempts: 0, log: [] }),
    ]);
    expect(seen.secondLogged?.tasks[1]).toEqual(
      expect.objectContaining({
        name: 'second[a]',
        status: 'running',
        attempts: 1,
        log: [expect.objectContaining({ level: 'info', message: 'second is running', fields: { item: 'a' } })],
      }),
    );
    // A read is a copy: the unit's record went on without changing what was read.
    expect(seen.secondLogged?.tasks[1].status).toBe('running');

    // Once the run ended, the store holds exactly what the run returned.
    expect(await h.engine.get(runId)).toEqual(record);
    expect(record.tasks.map((t) => [t.name, t.status])).toEqual([
      ['first', 'succeeded'],
      ['second[a]', 'succeeded'],
    ]);
  });
});

describe('an engine whose kernel is stopping', () => {
  it('refuses new runs as unavailable (503), not as bad input', async () => {
    const stopped = await bootEngine();
    const file = stopped.write('late', workflow('tasks:\n  - name: t\n    exec:\n      script: return true\n'));
    await stopped.stop();
    await expect(stopped.engine.start({ source: { file }, workflowName: 'late' })).rejects.toMatchObject({
      code: 'engine_stopping',
      status: 503,
      message: 'the engine is stopping; no new runs are accepted',
    });
  });
});
