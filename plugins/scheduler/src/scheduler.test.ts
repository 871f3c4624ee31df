// The scheduler over the real engine and store (a temp data directory), with a clock the tests
// move: DST changes in Europe/Berlin and America/New_York, a master stopped for three slots under
// each missed-run policy, a run outlasting its interval under each overlap policy, flow jobs, the
// notifications reaching a real local SMTP server and HTTP receiver, a job's own stack over its
// flow's (the real stacks plugin), and the REST routes.
//
// Flows: the flows plugin is built elsewhere; a small test plugin here provides FlowsRef with a
// real implementation over the engine of one fixed YAML (what the scheduler sees is the contract).
import { plugin as engine } from '@runner/plugin-engine';
import { plugin as http } from '@runner/plugin-http';
import { plugin as luaRuntime } from '@runner/plugin-lua-runtime';
import { plugin as metricsPlugin } from '@runner/plugin-metrics';
import { plugin as moduleExec } from '@runner/plugin-modules-host';
import { plugin as notifications } from '@runner/plugin-notifications';
import {
  NotificationsRef,
  definePlugin,
  FlowsRef,
  HttpRouterRef,
  MetricsRef,
  StacksRef,
  type CommandContext,
  type CommandInput,
  StoreRef,
  WorkflowEngineRef,
  type FlowsService,
  type Logger,
} from '@runner/plugin-sdk';
import { createTestKernel, staticConfig, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as stacksPlugin } from '@runner/plugin-stacks';
import { plugin as store } from '@runner/plugin-store';
import { plugin as template } from '@runner/plugin-template';
import { plugin as workflow } from '@runner/plugin-workflow';
import { execFileSync, spawnSync } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from './clock.js';
import { nextSlots, wallClock } from './cron.js';
import { JobStore, type JobInput } from './job-store.js';
import { latenessMetric, type LatenessObserver } from './metrics.js';
import { schedulerCommand } from './commands.js';
import { Notifier } from './notify.js';
import { registerSchedulerRoutes } from './routes.js';
import { Scheduler } from './scheduler.js';
import { SchedulerService } from './service.js';

// The flow's own stack is its runs' default; its task says which stack it read.
const FLOW_YAML =
  'version: "1.0"\nstack: flow-default\nvars:\n  who: nobody\ntasks:\n  - name: t\n    exec: { script: "return true, stack.name .. \' \' .. stack.vars.region" }\n';
const testFlows = definePlugin({
  id: 'test-flows',
  version: '0.0.0',
  description: 'FlowsRef over the engine of one fixed YAML (the flows plugin is built elsewhere)',
  provides: [FlowsRef],
  dependsOn: { engine: WorkflowEngineRef },
  setup(ctx, { engine: runs }) {
    const flow = { name: 'nightly', description: '', tags: [], active: true, version: 1, yaml: FLOW_YAML };
    const flows: FlowsService = {
      referencing: async () => [],
      get: async (name) => (name === 'nightly' ? { ...flow, created_at: '', updated_at: '' } : undefined),
      count: async () => ({ total: 1, active: 1 }),
      versions: async () => [],
      applyBatch: () => Promise.reject(new Error('the scheduler saves no flow')),
      async start(name, request) {
        const { runId, done } = await runs.start({
          source: { content: FLOW_YAML, name },
          trigger: request.trigger,
          user: request.user,
          vars: request.vars,
          ...(request.stack === undefined ? {} : { stack: request.stack }),
          varsFrom: request.varsFrom,
        });
        return { outcome: 'started', runId, done };
      },
    };
    ctx.provide(FlowsRef, flows);
  },
});

let kernel: TestKernel;
let jobs: JobStore;
let base: string;
let origin: string;
let lateness: LatenessObserver;
let gate: string;
const dataDir = mkdtempSync(join(tmpdir(), 'runner-scheduler-'));
const mails: string[] = [];
const hooks: Record<string, unknown>[] = [];
let flakyTries = 0;
let smtp: SMTPServer;
let receiver: Server;
let smtpPort = 0;
let hookUrl = '';
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet } as unknown as Logger;

function write(name: string, yaml: string) {
  writeFileSync(join(dataDir, 'workflows', name), yaml);
}

beforeAll(async () => {
  mkdirSync(join(dataDir, 'workflows'));
  // Where a local task's command may look (under a root master they run as engine.run_as).
  const open = mkdtempSync(join(tmpdir(), 'runner-scheduler-gate-'));
  chmodSync(open, 0o755);
  gate = join(open, 'gate');
  write('quick.yaml', 'version: "1.0"\nvars:\n  env: dev\ntasks:\n  - name: t\n    exec: { script: "return true" }\n');
  write('fail.yaml', 'version: "1.0"\ntasks:\n  - name: t\n    exec: { script: "error(\'boom\')" }\n');
  write(
    'slow.yaml',
    `version: "1.0"\ntasks:\n  - name: wait\n    exec: { script: 'exec.run("while [ ! -f ${gate} ]; do sleep 0.05; done"); return true' }\n`,
  );
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, _session, done) {
      let text = '';
      stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
      stream.on('end', () => (mails.push(text), done()));
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  smtpPort = (smtp.server.address() as { port: number }).port;
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      // /flaky fails the first try it gets (a receiver restarting); its tries are counted apart.
      if (req.url === '/flaky') {
        res.statusCode = (flakyTries += 1) === 1 ? 503 : 200;
        return res.end();
      }
      hooks.push(JSON.parse(body) as Record<string, unknown>);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;

  kernel = await createTestKernel({
    dataDir,
    plugins: [
      http,
      store,
      template,
      luaRuntime,
      moduleExec,
      notifications,
      workflow,
      engine,
      testFlows,
      metricsPlugin,
      stacksPlugin,
    ],
    profile: 'master',
    config: { 'http.port': 0, 'http.bind_address': '127.0.0.1' },
  });
  jobs = new JobStore(kernel.get(StoreRef));
  await jobs.open();
  lateness = latenessMetric(kernel.get(MetricsRef));
  registerSchedulerRoutes(kernel.get(HttpRouterRef), master(new ManualClock(Date.now())).service);
  await kernel.ready();
  origin = `http://127.0.0.1:${kernel.get(HttpRouterRef).address()?.port}`;
  base = `${origin}/api/v1/scheduler`;
  for (const [name, region] of [
    ['flow-default', 'eu'],
    ['job-own', 'us'],
  ])
    await fetch(`${origin}/api/v1/stacks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name, variables: { region } }),
    });
});

afterAll(async () => {
  await kernel?.stop();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
  receiver.close();
});

/** A scheduler (one life of a master) over the kernel's engine and store, on `clock`. */
function master(clock: ManualClock, masterId = 'local') {
  const engineService = kernel.get(WorkflowEngineRef);
  const scheduler = new Scheduler({
    jobs,
    clock,
    masterId,
    engine: engineService,
    flows: kernel.get(FlowsRef),
    workflowDirs: [join(dataDir, 'workflows')],
    notifier: new Notifier({ url: `smtp://127.0.0.1:${smtpPort}`, from: 'runner@test' }, kernel.get(NotificationsRef), {
      attempts: 3,
      backoffMs: 20,
    }),
    logger: quiet,
    missedAfterMs: 10_000,
    isAlive: async (id) => id === masterId,
    lateness,
  });
  const service = new SchedulerService(jobs, scheduler, {
    engine: engineService,
    flows: kernel.get(FlowsRef),
    stacks: kernel.get(StacksRef),
    workflowDirs: [join(dataDir, 'workflows')],
    defaultTimezone: 'UTC',
    now: () => new Date(clock.now()),
    changed: () => {},
  });
  /** Passes at each slot due until `end`. */
  const through = async (end: string) => {
    for (let due = scheduler.nextDue(); due !== undefined && due <= Date.parse(end); due = scheduler.nextDue())
      await at(due);
  };
  /** Moves the clock to `at` and runs a pass. */
  const at = async (when: string | number) => {
    clock.set(typeof when === 'number' ? when : Date.parse(when));
    await scheduler.tick();
  };
  return { scheduler, service, at, through };
}

const add = (service: SchedulerService, name: string, input: JobInput) => service.create({ name, ...input });

/** The job's slots, oldest first, as [slot time, outcome]. */
async function outcomes(job: string): Promise<[string, string][]> {
  const { slots } = await jobs.history(job, 500, 0);
  return slots.reverse().map((s) => [s.slot_at, s.outcome]);
}

afterEach(async () => {
  for (const job of jobs.list()) await jobs.delete(job.name);
});

describe('daylight saving time: each wall-clock time fires once', () => {
  it('Europe/Berlin: 02:30 on the spring-forward day runs at 03:30; the repeated autumn hour fires once', async () => {
    const { service, scheduler, at, through } = master(new ManualClock(Date.parse('2026-03-27T23:00:00Z')));
    await add(service, 'daily-0230', { workflow: 'quick.yaml', schedule: '30 2 * * *', timezone: 'Europe/Berlin' });
    await add(service, 'half-hourly', { workflow: 'quick.yaml', schedule: '*/30 * * * *', timezone: 'Europe/Berlin' });
    await service.update('half-hourly', { enabled: false });
    await at('2026-03-28T00:00:00Z');
    await through('2026-03-30T06:00:00Z');
    await scheduler.settled();
    const daily = await outcomes('daily-0230');
    expect(daily.map(([slot]) => `${slot} ${wallClock(Date.parse(slot), 'Europe/Berlin')}`)).toEqual([
      '2026-03-28T01:30:00.000Z 2026-03-28 02:30',
      '2026-03-29T01:30:00.000Z 2026-03-29 03:30',
      '2026-03-30T00:30:00.000Z 2026-03-30 02:30',
    ]);
    expect(daily.every(([, outcome]) => outcome === 'started')).toBe(true);

    // Autumn: 02:00-02:59 happens twice (CEST, then CET); every half hour fires once per wall-clock time.
    await at('2026-10-24T22:50:00Z');
    await service.update('half-hourly', { enabled: true });
    await at('2026-10-24T22:50:00Z'); // the loop's pass after a change (forget wakes it)
    await through('2026-10-25T02:30:00Z');
    await scheduler.settled();
    const autumn = await outcomes('half-hourly');
    expect(autumn.map(([slot, outcome]) => `${wallClock(Date.parse(slot), 'Europe/Berlin')} ${outcome}`)).toEqual([
      '2026-10-25 01:00 started',
      '2026-10-25 01:30 started',
      '2026-10-25 02:00 started',
      '2026-10-25 02:30 started',
      '2026-10-25 03:00 started',
      '2026-10-25 03:30 started',
    ]);
    expect(autumn.map(([slot]) => slot).slice(2, 5)).toEqual([
      '2026-10-25T00:00:00.000Z', // 02:00 CEST
      '2026-10-25T00:30:00.000Z', // 02:30 CEST; 02:00 and 02:30 CET are not slots
      '2026-10-25T02:00:00.000Z', // 03:00 CET
    ]);
  });

  it('America/New_York: 02:00 in the March gap runs at 03:00 EDT; 01:30 in November runs once', () => {
    const ny = (expression: string, from: string, count: number) =>
      nextSlots({ expression, timezone: 'America/New_York' }, Date.parse(from), count).map(
        (ms) => `${new Date(ms).toISOString()} ${wallClock(ms, 'America/New_York')}`,
      );
    expect(ny('0 2 * * *', '2026-03-07T12:00:00Z', 2)).toEqual([
      '2026-03-08T07:00:00.000Z 2026-03-08 03:00',
      '2026-03-09T06:00:00.000Z 2026-03-09 02:00',
    ]);
    expect(ny('30 1 * * *', '2026-10-31T12:00:00Z', 2)).toEqual([
      '2026-11-01T05:30:00.000Z 2026-11-01 01:30',
      '2026-11-02T06:30:00.000Z 2026-11-02 01:30',
    ]);
    expect(ny('0 * * * *', '2026-11-01T04:30:00Z', 3)).toEqual([
      '2026-11-01T05:00:00.000Z 2026-11-01 01:00', // EDT
      '2026-11-01T07:00:00.000Z 2026-11-01 02:00', // EST: 01:00 EST (06:00Z) was a repeat
      '2026-11-01T08:00:00.000Z 2026-11-01 03:00',
    ]);
  });

  it('fires New York jobs through the loop at those times', async () => {
    const { service, scheduler, at, through } = master(new ManualClock(Date.parse('2026-03-08T04:00:00Z')));
    await add(service, 'ny-0200', { workflow: 'quick.yaml', schedule: '0 2 * * *', timezone: 'America/New_York' });
    await at('2026-03-08T05:00:00Z');
    await through('2026-03-09T07:00:00Z');
    await scheduler.settled();
    expect(await outcomes('ny-0200')).toEqual([
      ['2026-03-08T07:00:00.000Z', 'started'],
      ['2026-03-09T06:00:00.000Z', 'started'],
    ]);
  });
});

describe('a master stopped for three slots', () => {
  it('applies each missed-run policy exactly when it comes back', async () => {
    const first = master(new ManualClock(Date.parse('2026-05-04T09:59:30Z')), 'first-life');
    for (const [name, missed] of [
      ['m-skip', 'skip'],
      ['m-once', 'run_once'],
      ['m-all', 'run_all'],
    ] as const)
      await add(first.service, name, { workflow: 'quick.yaml', schedule: '* * * * *', missed, missed_cap: 2 });
    await first.at('2026-05-04T10:00:00Z');
    await first.scheduler.settled();
    await first.scheduler.close();

    // Down through 10:01, 10:02 and 10:03; back at 10:03:30, past the 10 s grace of each.
    const second = master(new ManualClock(Date.parse('2026-05-04T10:03:30Z')), 'second-life');
    await second.at('2026-05-04T10:03:30Z');
    await second.scheduler.settled();
    await second.at('2026-05-04T10:03:40Z'); // run_all's second catch-up, once the first ended
    await second.scheduler.settled();
    const slot = (minute: number) => `2026-05-04T10:0${minute}:00.000Z`;
    expect(await outcomes('m-skip')).toEqual([
      [slot(0), 'started'],
      [slot(1), 'missed'],
      [slot(2), 'missed'],
      [slot(3), 'missed'],
    ]);
    expect(await outcomes('m-once')).toEqual([
      [slot(0), 'started'],
      [slot(1), 'missed'],
      [slot(2), 'missed'],
      [slot(3), 'started'],
    ]);
    expect(await outcomes('m-all')).toEqual([
      [slot(0), 'started'],
      [slot(1), 'missed'],
      [slot(2), 'started'],
      [slot(3), 'started'],
    ]);
    const { slots } = await jobs.history('m-all', 10, 0);
    const [three, two] = slots;
    // One after another: the 10:03 catch-up started once the 10:02 one had ended.
    const runs = kernel.get(WorkflowEngineRef);
    const [run3, run2] = await Promise.all([runs.get(three!.run_id!), runs.get(two!.run_id!)]);
    expect(Date.parse(run3!.startedAt)).toBeGreaterThanOrEqual(Date.parse(run2!.completedAt!));
    expect(two).toMatchObject({ run_status: 'succeeded', master: 'second-life', detail: 'catch-up of a missed slot' });
    expect(slots[2]!.detail).toBe('missed while no master ran the scheduler (missed: run_all, cap 2)');
  });
});

describe('a run that outlasts its interval', () => {
  it('is skipped over, queued behind or run beside, by the overlap policy', async () => {
    const { service, scheduler, at } = master(new ManualClock(Date.parse('2026-05-05T09:59:59Z')));
    for (const overlap of ['skip', 'queue', 'allow'] as const)
      await add(service, `o-${overlap}`, { workflow: 'slow.yaml', schedule: '* * * * *', overlap });
    await at('2026-05-05T10:00:00Z');
    await at('2026-05-05T10:01:00Z');
    await at('2026-05-05T10:02:00Z');
    writeFileSync(gate, ''); // every slow run ends
    await scheduler.settled();
    await at('2026-05-05T10:02:05Z'); // the waiting slot starts now that the run before it ended
    await scheduler.settled();
    const slot = (minute: number) => `2026-05-05T10:0${minute}:00.000Z`;
    expect(await outcomes('o-skip')).toEqual([
      [slot(0), 'started'],
      [slot(1), 'skipped_overlap'],
      [slot(2), 'skipped_overlap'],
    ]);
    expect(await outcomes('o-queue')).toEqual([
      [slot(0), 'started'],
      [slot(1), 'started'],
      [slot(2), 'skipped_overlap'],
    ]);
    expect(await outcomes('o-allow')).toEqual([
      [slot(0), 'started'],
      [slot(1), 'started'],
      [slot(2), 'started'],
    ]);
    const queued = (await jobs.history('o-queue', 10, 0)).slots;
    expect(queued[0]!.detail).toMatch(
      /^overlap: queue; the run of .*; the slot of 2026-05-05T10:01:00.000Z was already waiting$/,
    );
    expect(queued[1]).toMatchObject({ started_at: '2026-05-05T10:02:05.000Z', run_status: 'succeeded' });
    expect((await jobs.history('o-skip', 10, 0)).slots[1]!.detail).toMatch(
      /^overlap: skip; the run of 2026-05-05T10:00:00.000Z \(\S+\) was still running/,
    );
  });
});

describe('a slot waiting under overlap queue', () => {
  it('does not start once its job was disabled or removed meanwhile', async () => {
    const hold = join(mkdtempSync(join(tmpdir(), 'runner-scheduler-hold-')), 'gate');
    chmodSync(dirname(hold), 0o755);
    write(
      'held.yaml',
      `version: "1.0"\ntasks:\n  - name: wait\n    exec: { script: 'exec.run("while [ ! -f ${hold} ]; do sleep 0.05; done"); return true' }\n`,
    );
    const { service, scheduler, at } = master(new ManualClock(Date.parse('2026-05-08T09:59:59Z')));
    for (const name of ['q-off', 'q-gone'])
      await add(service, name, { workflow: 'held.yaml', schedule: '* * * * *', overlap: 'queue' });
    await at('2026-05-08T10:00:00Z');
    await at('2026-05-08T10:01:00Z'); // the 10:00 runs still run: both 10:01 slots wait
    expect((await outcomes('q-off')).map(([, outcome]) => outcome)).toEqual(['started', 'queued']);
    await service.setEnabled('q-off', false);
    await service.remove('q-gone');
    await at('2026-05-08T10:01:05Z');
    // Closed at once, while the run it waited for still runs.
    const [waited] = (await jobs.history('q-off', 10, 0)).slots;
    expect(waited).toMatchObject({ outcome: 'skipped_overlap', run_id: null, started_at: null });
    expect(waited!.detail).toMatch(/^waits: the run of .*; not started: the job was disabled while the slot waited$/);
    writeFileSync(hold, '');
    await scheduler.settled();
    await at('2026-05-08T10:01:10Z');
    await scheduler.settled();
    const runs = kernel.get(WorkflowEngineRef);
    for (const name of ['q-off', 'q-gone']) {
      const { runs: started } = await runs.list({ user: `schedule:${name}` });
      expect(started.map((r) => r.status)).toEqual(['succeeded']); // the 10:00 run only
    }
    expect((await outcomes('q-off')).map(([, outcome]) => outcome)).toEqual(['started', 'skipped_overlap']);
  });
});

describe('the start lateness metric', () => {
  /** `runner_scheduler_start_lateness_seconds` as /metrics exports it: bucket and count lines by their labels. */
  async function exported(): Promise<{ text: string; value: (series: string) => number }> {
    const text = await (await fetch(`${origin}/metrics`)).text();
    const value = (series: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`runner_scheduler_start_lateness_seconds${series} `));
      return line ? Number(line.split(' ').at(-1)) : 0;
    };
    return { text, value };
  }

  it('observes how late each scheduled slot started, by how it started; run now is not a slot of the schedule', async () => {
    const before = await exported();
    const { service, scheduler, at } = master(new ManualClock(Date.parse('2026-05-07T09:59:59Z')));
    await add(service, 'late', { workflow: 'quick.yaml', schedule: '* * * * *' });
    await at('2026-05-07T10:00:02.500Z'); // the pass that finds the 10:00 slot comes 2.5 s after it
    await service.runNow('late', 'someone');
    await scheduler.settled();
    const after = await exported();
    const more = (series: string) => after.value(series) - before.value(series);
    expect(more('_count{start="due"}')).toBe(1);
    expect(more('_sum{start="due"}')).toBeCloseTo(2.5, 3);
    expect(more('_bucket{le="2.5",start="due"}')).toBe(1);
    expect(more('_bucket{le="1",start="due"}')).toBe(0);
    expect(after.text).toContain('# TYPE runner_scheduler_start_lateness_seconds histogram');
    // Debian's promtool, where installed, checks the exposition as Prometheus would read it.
    if (spawnSync('promtool', ['--version']).status === 0)
      expect(execFileSync('promtool', ['check', 'metrics'], { input: after.text, encoding: 'utf8' })).toBe('');
  });
});

describe('flows, notifications and the runs a job starts', () => {
  it('starts a saved flow with the trigger scheduler and the job as its user', async () => {
    const { service, scheduler, at } = master(new ManualClock(Date.parse('2026-05-06T09:59:00Z')));
    await add(service, 'nightly-flow', { flow: 'nightly', schedule: '0 10 * * *', vars: { who: 'cron' } });
    await at('2026-05-06T10:00:00Z');
    await scheduler.settled();
    const [slot] = (await jobs.history('nightly-flow', 1, 0)).slots;
    expect(slot).toMatchObject({ outcome: 'started', run_status: 'succeeded' });
    const run = await kernel.get(WorkflowEngineRef).get(slot!.run_id!);
    expect(run).toMatchObject({ trigger: 'scheduler', user: 'schedule:nightly-flow', workflowName: 'nightly' });
    expect(run).toMatchObject({ stack: 'flow-default', tasks: [{ message: 'flow-default eu' }] });
  });

  it("runs on the job's own stack over the flow's, and refuses a stack that does not exist at save", async () => {
    const { service, scheduler, at } = master(new ManualClock(Date.parse('2026-05-06T09:59:00Z')));
    await add(service, 'own-stack', { flow: 'nightly', schedule: '0 10 * * *', stack: 'job-own' });
    await at('2026-05-06T10:00:00Z');
    await scheduler.settled();
    const [slot] = (await jobs.history('own-stack', 1, 0)).slots;
    const run = await kernel.get(WorkflowEngineRef).get(slot!.run_id!);
    expect(run).toMatchObject({ status: 'succeeded', stack: 'job-own', tasks: [{ message: 'job-own us' }] });

    const refused = (change: Promise<unknown>) => expect(change).rejects.toMatchObject({ details: { field: 'stack' } });
    await refused(add(service, 'typo', { flow: 'nightly', schedule: '0 10 * * *', stack: 'job-onw' }));
    await refused(service.update('own-stack', { stack: 'gone' }));
    await expect(add(service, 'typo', { flow: 'nightly', schedule: '0 10 * * *', stack: 'job-onw' })).rejects.toThrow(
      'stack: stack "job-onw" does not exist (did you mean "job-own"?)',
    );
    // An empty stack is none: the flow's own again.
    expect((await service.update('own-stack', { stack: '' })).stack).toBeNull();
  });

  it("refuses a var the workflow does not declare in the job's words (vars.x), not the CLI's", async () => {
    const { service, scheduler, at } = master(new ManualClock(Date.parse('2026-05-06T09:59:00Z')));
    await add(service, 'flow-typo', { flow: 'nightly', schedule: '0 10 * * *', vars: { whom: 'cron' } });
    await add(service, 'file-typo', { workflow: 'quick.yaml', schedule: '0 10 * * *', vars: { envv: 'prod' } });
    await at('2026-05-06T10:00:00Z');
    await scheduler.settled();
    const [flowSlot] = (await jobs.history('flow-typo', 1, 0)).slots;
    expect(flowSlot).toMatchObject({ outcome: 'failed_to_start' });
    expect(flowSlot?.detail).toContain('vars.whom: the workflow has no variable "whom" (did you mean "who"?)');
    const [fileSlot] = (await jobs.history('file-typo', 1, 0)).slots;
    expect(fileSlot?.detail).toContain('vars.envv: the workflow has no variable "envv" (did you mean "env"?)');
    expect(`${flowSlot?.detail}${fileSlot?.detail}`).not.toContain('--var');
  });

  it('notifies a failure by webhook and e-mail, and says what each came to', async () => {
    const { service, scheduler, at } = master(new ManualClock(Date.parse('2026-05-06T09:59:00Z')));
    await add(service, 'breaks', {
      workflow: 'fail.yaml',
      schedule: '0 10 * * *',
      notify_on: 'failure',
      notify_webhook: hookUrl,
      notify_email: ['ops@example.test'],
    });
    await add(service, 'quiet-on-failure', {
      workflow: 'fail.yaml',
      schedule: '0 10 * * *',
      notify_on: 'success',
      notify_webhook: hookUrl,
    });
    await at('2026-05-06T10:00:00Z');
    await scheduler.settled();
    const [slot] = (await jobs.history('breaks', 1, 0)).slots;
    expect(slot).toMatchObject({ outcome: 'started', run_status: 'failed' });
    expect(slot!.notice).toBe('webhook 200; e-mail sent to ops@example.test');
    expect(hooks).toEqual([
      expect.objectContaining({
        type: 'scheduler.run',
        job: 'breaks',
        status: 'failed',
        failure: true,
        run_id: slot!.run_id,
      }),
    ]);
    expect(mails).toHaveLength(1);
    expect(mails[0]).toContain('Subject: [runner] scheduled job breaks failed (failed)');
    expect(mails[0]).toContain(`Run:     ${slot!.run_id}`);
    expect((await jobs.history('quiet-on-failure', 1, 0)).slots[0]!.notice).toBeNull();
  });

  it('tries a failed notification again, in the background, and keeps its tries with the slot', async () => {
    const { service, scheduler, at } = master(new ManualClock(Date.parse('2026-05-06T10:59:00Z')));
    flakyTries = 0;
    await add(service, 'flaky-hook', {
      workflow: 'quick.yaml',
      schedule: '0 11 * * *',
      notify_on: 'both',
      notify_webhook: new URL('/flaky', hookUrl).href,
    });
    await at('2026-05-06T11:00:00Z');
    // The pass ended with the run started; the notification is still being tried.
    expect((await jobs.history('flaky-hook', 1, 0)).slots[0]!.notice).toBeNull();
    await scheduler.settled();
    const [slot] = (await jobs.history('flaky-hook', 1, 0)).slots;
    expect(slot).toMatchObject({ outcome: 'started', run_status: 'succeeded' });
    expect(slot!.notice).toBe('webhook 200 (try 2 of 3; 1: webhook 503)');
    expect(flakyTries).toBe(2);
  });
});

describe('/api/v1/scheduler/jobs', () => {
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  it('adds, lists, shows, changes, disables, runs now and removes a job', async () => {
    const created = await call('POST', '/jobs', {
      name: 'hourly',
      workflow: 'quick.yaml',
      schedule: '0 * * * *',
      timezone: 'Asia/Tokyo',
      overlap: 'queue',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'hourly', missed: 'skip', overlap: 'queue', enabled: true, flow: null });
    expect(created.body.next_runs).toHaveLength(5);
    expect(created.body.next_runs.every((at: string) => at.endsWith(':00:00.000Z'))).toBe(true);
    expect((await call('GET', '/jobs')).body).toMatchObject({ total: 1, jobs: [{ name: 'hourly' }] });

    const changed = await call('PATCH', '/jobs/hourly', {
      schedule: '15 9 * * 1-5',
      vars: { env: 'prod' },
      stack: 'job-own',
    });
    expect(changed.body).toMatchObject({ schedule: '15 9 * * 1-5', vars: { env: 'prod' }, stack: 'job-own' });
    expect(changed.body.next_runs.every((at: string) => at.endsWith('T00:15:00.000Z'))).toBe(true); // 09:15 in Tokyo

    expect((await call('POST', '/jobs/hourly/disable')).body).toMatchObject({ enabled: false, next_runs: [] });
    expect((await call('POST', '/jobs/hourly/enable')).body.next_runs).toHaveLength(5);

    const ran = await call('POST', '/jobs/hourly/run');
    expect(ran.status, JSON.stringify(ran.body)).toBe(202);
    expect(ran.body.detail).toBe('run now by anonymous');
    expect(ran.body).toMatchObject({ job: 'hourly', kind: 'manual', outcome: 'started' });
    const run = await kernel.get(WorkflowEngineRef).get(ran.body.run_id);
    expect(run).toMatchObject({ trigger: 'scheduler', user: 'schedule:hourly' });
    const history = await call('GET', '/jobs/hourly/history?limit=10');
    expect(history.body).toMatchObject({ total: 1, slots: [{ kind: 'manual', run_id: ran.body.run_id }] });
    expect((await call('GET', '/jobs/hourly')).body.last).toMatchObject({ run_id: ran.body.run_id });

    expect((await call('DELETE', '/jobs/hourly')).status).toBe(204);
    expect((await call('GET', '/jobs/hourly')).status).toBe(404);
  });

  it('refuses a bad job naming the field at fault', async () => {
    const refused = async (body: Record<string, unknown>) => {
      const answer = await call('POST', '/jobs', { name: 'x', workflow: 'quick.yaml', schedule: '* * * * *', ...body });
      expect(answer.status).toBe(400);
      return answer.body.error as { field: string; message: string };
    };
    expect(await refused({ schedule: '*/5 * * *' })).toMatchObject({
      field: 'schedule',
      message:
        'schedule: "*/5 * * *" has 4 fields; a schedule has five (minute hour day-of-month month day-of-week), e.g. "*/5 * * * *"',
    });
    expect((await refused({ schedule: '61 * * * *' })).field).toBe('schedule');
    expect(await refused({ timezone: 'Mars/Olympus' })).toMatchObject({ field: 'timezone' });
    expect(await refused({ flow: 'nightly' })).toMatchObject({
      field: 'flow',
      message: 'flow: give a flow or a workflow file, not both',
    });
    expect(await refused({ workflow: 'nope.yaml' })).toMatchObject({ field: 'workflow' });
    expect(await refused({ workflow: undefined, flow: 'daily' })).toMatchObject({
      field: 'flow',
      message: 'flow: there is no saved flow named "daily"',
    });
    expect(await refused({ notify_on: 'failure' })).toMatchObject({ field: 'notify_on' });
    expect(await refused({ notify_email: ['ops'], notify_on: 'both' })).toMatchObject({ field: 'notify_email[0]' });
    expect(await refused({ name: 'a b' })).toMatchObject({ field: 'name' });
    expect(await refused({ stack: 'nowhere' })).toMatchObject({ field: 'stack' });

    await call('POST', '/jobs', { name: 'daily', workflow: 'quick.yaml', schedule: '0 3 * * *' });
    expect((await call('POST', '/jobs', { name: 'daily', workflow: 'quick.yaml', schedule: '0 3 * * *' })).status).toBe(
      409,
    );
    const unknown = await call('GET', '/jobs/dialy');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toBe(
      'scheduler job "dialy" does not exist (did you mean "daily"?) (jobs: daily)',
    );
  });
});

describe('runner scheduler list|history --watch', () => {
  /** The subcommand as the CLI runs it (built by resourceCommand from the route), against this kernel's HTTP port. */
  async function cli(name: string, args: string[], options: Record<string, unknown>) {
    const run = schedulerCommand.subcommands!.find((c) => c.name === name)!.run as (
      input: CommandInput,
      ctx: CommandContext,
    ) => Promise<number | void>;
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (d: Buffer) => (out += d.toString()));
    const ctx = {
      config: staticConfig({}, dataDir),
      logger: quiet,
      stdout,
      stderr: new PassThrough(),
      stdin: new PassThrough(),
      isTTY: false,
    } as unknown as CommandContext;
    const code = await run({ args, options: { output: 'text', 'master-url': origin, ...options } }, ctx);
    return { code, stdout: out };
  }

  it("prints the jobs and a job's slots again at each interval", async () => {
    const { service, scheduler, at } = master(new ManualClock(Date.parse('2026-05-09T09:59:59Z')));
    await add(service, 'watched', { workflow: 'quick.yaml', schedule: '* * * * *' });
    await at('2026-05-09T10:00:00Z');
    await scheduler.settled();
    const list = await cli('list', [], { watch: true, interval: 0.01, count: 2 });
    expect(list.code).toBe(0);
    expect(list.stdout.match(/^watched +file quick\.yaml/gm)).toHaveLength(2);
    const history = await cli('history', ['watched'], { watch: true, interval: 0.01, count: 2, output: 'json' });
    const answers = history.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { slots: { slot_at: string; outcome: string }[] });
    expect(answers).toHaveLength(2);
    const added = await cli('add', ['staged'], { workflow: 'quick.yaml', schedule: '0 3 * * *', stack: 'job-own' });
    expect(added.code).toBe(0);
    expect((await cli('get', ['staged'], {})).stdout).toMatch(/^stack: +job-own$/m);
    for (const answer of answers)
      expect(answer.slots).toEqual([
        expect.objectContaining({ slot_at: '2026-05-09T10:00:00.000Z', outcome: 'started' }),
      ]);
  });
});
