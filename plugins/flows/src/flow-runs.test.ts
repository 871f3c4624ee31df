// A flow's concurrency across masters: two kernels (master profile, real engine, Lua runtime and
// exec module) on one PostgreSQL database, each starting runs of the same flow through FlowsRef.
// A run holds its slot until a marker file appears, so each test decides when runs end.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  FlowsRef,
  WorkflowEngineRef,
  type FlowStart,
  type FlowsService,
  type WorkflowEngine,
} from '@runner/plugin-sdk';
import { createTestKernel, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as engine } from '@runner/plugin-engine';
import { plugin as luaRuntime } from '@runner/plugin-lua-runtime';
import { plugin as moduleExec } from '@runner/plugin-modules-host';
import { plugin as store } from '@runner/plugin-store';
import { plugin as template } from '@runner/plugin-template';
import { plugin as workflow } from '@runner/plugin-workflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../../../test/support/postgres.js';
import { FlowStore } from './flow-store.js';
import { plugin as flows } from './plugin.js';

const dir = mkdtempSync(join(tmpdir(), 'flow-runs-'));
/** A workflow whose one task waits until `<dir>/<gate>` exists. */
const gated = (gate: string) => `version: "1.0"
tasks:
  - name: wait
    exec:
      script: 'exec.run("while [ ! -f ${join(dir, gate)} ]; do sleep 0.02; done"); return true'
`;
const open = (gate: string) => writeFileSync(join(dir, gate), '');

interface Master {
  kernel: TestKernel;
  flows: FlowsService;
  engine: WorkflowEngine;
  store: FlowStore;
}

let db: TestDatabase;
const masters: Master[] = [];

async function startMaster(url: string): Promise<Master> {
  const kernel = await createTestKernel({
    plugins: [store, template, luaRuntime, moduleExec, workflow, engine, flows],
    profile: 'master',
    // Local tasks in this process: the executor child (another user) is the engine's own test's business.
    config: { 'store.url': url, 'engine.run_as': 'self' },
  });
  await kernel.ready();
  const runs = kernel.get(WorkflowEngineRef);
  const { StoreRef } = await import('@runner/plugin-sdk');
  return {
    kernel,
    flows: kernel.get(FlowsRef),
    engine: runs,
    store: new FlowStore(kernel.get(StoreRef), async () => {}),
  };
}

const runOf = (start: FlowStart) => {
  if (start.outcome !== 'started') throw new Error(`expected a started run, got ${JSON.stringify(start)}`);
  return start;
};

describe.skipIf(!postgresReachable())('flow concurrency on two masters sharing PostgreSQL', () => {
  beforeAll(async () => {
    db = createTestDatabase('flow_runs');
    masters.push(await startMaster(db.url));
    masters.push(await startMaster(db.url));
  }, 60_000);
  afterAll(async () => {
    for (const m of masters.splice(0)) await m.kernel.stop();
    db?.drop();
  });

  it('refuses an inactive flow from schedules and hooks; a manual run goes, recorded as such', async () => {
    const [a] = masters as [Master];
    await a.store.create({ name: 'idle', yaml: gated('idle-gate'), active: false }, 'ann');
    await expect(a.flows.start('idle', { trigger: 'scheduler', user: 'schedule:nightly' })).rejects.toThrow(
      'flow "idle" is inactive: schedules and hooks start only active flows (runner flow activate idle)',
    );
    await expect(a.flows.start('idle', { trigger: 'hook' })).rejects.toThrow('is inactive');
    open('idle-gate');
    const manual = runOf(await a.flows.start('idle', { trigger: 'api', user: 'ann' }));
    expect(manual).toMatchObject({ inactive: true });
    expect((await manual.done).status).toBe('succeeded');
    // The run records which flow and version it ran.
    expect(await a.engine.request(manual.runId)).toMatchObject({ source: { kind: 'flow', ref: 'idle', version: 1 } });
    await expect.poll(async () => (await a.store.require('idle')).stats.executions).toBe(1);
  });

  it("names a var the flow does not declare as its starter gave it: a hook's vars.x, the CLI's --var", async () => {
    const [a] = masters as [Master];
    const yaml = 'version: "1.0"\nvars: { env: dev }\ntasks:\n  - { name: t, exec: { script: return true } }\n';
    await a.store.create({ name: 'typed', yaml }, 'ann');
    await expect(
      a.flows.start('typed', { trigger: 'hook', vars: { envv: 'prod' }, varsFrom: 'fields' }),
    ).rejects.toThrow('vars.envv: the workflow has no variable "envv" (did you mean "env"?); declared: env');
    await expect(a.flows.start('typed', { trigger: 'cli', vars: { envv: 'prod' } })).rejects.toThrow(
      '--var "envv=prod": the workflow has no variable "envv"',
    );
  });

  it('queues beyond the limit on either master and starts the queued run when a slot frees', async () => {
    const [a, b] = masters as [Master, Master];
    await a.store.create({ name: 'q', yaml: gated('q-gate'), concurrency: { limit: 1, behavior: 'queue' } }, 'ann');
    const first = runOf(await a.flows.start('q', { trigger: 'api' }));
    // Two starts at once on the other master: the slot is taken, both queue.
    const more = await Promise.all([
      b.flows.start('q', { trigger: 'scheduler' }),
      b.flows.start('q', { trigger: 'hook' }),
    ]);
    expect(more.map((s) => s.outcome)).toEqual(['queued', 'queued']);
    open('q-gate');
    await first.done;
    // Each queued run starts when the one before ends (the gate is open: they end at once).
    await expect.poll(async () => (await a.store.require('q')).stats.executions, { timeout: 30_000 }).toBe(3);
    const { runs } = await a.engine.list({ workflow: 'q' });
    expect(runs.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
  });

  it('never lets two masters take the last slot together (skip)', async () => {
    const [a, b] = masters as [Master, Master];
    await a.store.create({ name: 's', yaml: gated('s-gate'), concurrency: { limit: 2, behavior: 'skip' } }, 'ann');
    const starts = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).flows.start('s', { trigger: 'api' })),
    );
    expect(starts.filter((s) => s.outcome === 'started')).toHaveLength(2);
    const skipped = starts.filter((s) => s.outcome === 'skipped');
    expect(skipped).toHaveLength(4);
    expect(skipped[0]).toMatchObject({ reason: 'flow s already runs 2 of 2 at once' });
    open('s-gate');
    await Promise.all(starts.map((s) => (s.outcome === 'started' ? s.done : undefined)));
  });

  it('cancels the oldest run, on whichever master runs it (cancel_oldest)', async () => {
    const [a, b] = masters as [Master, Master];
    await a.store.create(
      { name: 'c', yaml: gated('c-gate'), concurrency: { limit: 1, behavior: 'cancel_oldest' } },
      'ann',
    );
    const oldest = runOf(await a.flows.start('c', { trigger: 'api' }));
    const newest = runOf(await b.flows.start('c', { trigger: 'api' }));
    const ended = await oldest.done;
    expect(ended.status).toBe('cancelled');
    expect(ended.error ?? ended.cancelledBy).toBeTruthy();
    open('c-gate');
    expect((await newest.done).status).toBe('succeeded');
    expect(existsSync(join(dir, 'c-gate'))).toBe(true);
  });
});
