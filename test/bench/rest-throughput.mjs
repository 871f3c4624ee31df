// Throughput of a master over REST: two-task runs submitted with `POST /api/v1/workflows/run` at a
// fixed rate (open loop: a slow master does not slow the submitter down), each run's latency taken
// from the moment its request left to the moment its `workflow.completed` message arrived on the
// WebSocket. Target (the bar every feature on the run path must keep): 12,000 runs a minute
// (200/s) with p99 submit-to-completion under 50 ms.
// Measured at steady state: after 200 runs one by one (JIT, caches), the same open loop runs for
// --warmup seconds unmeasured. Without it the first second of the open loop held the whole tail
// (150-225 ms while the rest stayed under 80: V8 still optimizing the concurrent path).
//
//   node build.mjs && node test/bench/rest-throughput.mjs [--rate 200] [--seconds 30] [--warmup 2] [--templates]
//     [--hook] [--store postgres://postgres@127.0.0.1:5432/bench]
//
// With --hook a trivial Lua hook runs on every run's workflow.completed (through the durable event
// queue): the bar with hooks firing, not only loaded.
//
// With --store the master keeps its store on that PostgreSQL database (emptied first: a database
// of the bench's own, never one in use) and the target is PostgreSQL's: 6,000 runs a minute
// (--rate 100) with p99 under 100 ms on one master.
//
// Prints readable lines, then one JSON line.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { emptyDatabase, percentile, round, startMaster } from './support/master.mjs';

const { values } = parseArgs({
  options: {
    store: { type: 'string' },
    rate: { type: 'string' },
    seconds: { type: 'string', default: '30' },
    warmup: { type: 'string', default: '2' },
    // The same two tasks with templates: a condition, a script with a value and one with a loop
    // (all render on the master's thread; nested loops would go to a template worker).
    templates: { type: 'boolean', default: false },
    hook: { type: 'boolean', default: false },
  },
});
const onPostgres = values.store !== undefined;
const TARGET_PER_MINUTE = onPostgres ? 6_000 : 12_000;
const TARGET_P99_MS = onPostgres ? 100 : 50;
const rate = Number(values.rate ?? TARGET_PER_MINUTE / 60);
const seconds = Number(values.seconds);
const warmupSeconds = Number(values.warmup);

const WORKFLOW = `version: "1.0"
tasks:
  - name: first
    exec:
      script: return true, "one", { n = 1 }
  - name: second
    depends_on: [first]
    exec:
      script: return tasks.first.outputs.n == 1, "two"
`;

const TEMPLATED = `version: "1.0"
vars: { n: 1 }
tasks:
  - name: first
    when: "{{ vars.n == 1 }}"
    exec:
      script: return true, "one", { n = {{ vars.n }} }
  - name: second
    depends_on: [first]
    exec:
      script: return tasks.first.outputs.n == 1, "{% for i in range(3) %}{{ i }}{% endfor %}"
`;
const content = values.templates ? TEMPLATED : WORKFLOW;

if (onPostgres) await emptyDatabase(values.store);
const master = await startMaster(onPostgres ? { args: ['--store', values.store] } : {});
let failure;
const result = {
  store: onPostgres ? 'postgres' : 'embedded',
  rate_per_s: rate,
  seconds,
  warmup_seconds: warmupSeconds,
  templates: values.templates,
  hook: values.hook,
};
try {
  if (values.hook) {
    const hook = {
      name: 'bench-completed',
      event_type: 'workflow.completed',
      script: 'return hook.payload.run_id ~= nil',
    };
    const created = await master.request('POST', '/api/v1/hooks', hook);
    if (created.status !== 201) throw new Error(`adding the hook: ${created.status} ${JSON.stringify(created.body)}`);
  }
  const sentAt = new Map();
  const doneAt = new Map();
  const statuses = new Map();
  const ws = new WebSocket(`${master.base.replace('http', 'ws')}/api/v1/ws`, { headers: master.headers() });
  await new Promise((ok, fail) => {
    ws.once('open', ok);
    ws.once('error', fail);
  });
  ws.on('message', (raw) => {
    const message = JSON.parse(String(raw));
    if (message.type !== 'workflow.completed' && message.type !== 'workflow.failed') return;
    doneAt.set(message.data.run_id, performance.now());
    statuses.set(message.data.run_id, message.data.status);
  });

  /** Submits `count` runs at `rate` a second without waiting for answers (open loop); gives its start. */
  const openLoop = async (count) => {
    const start = performance.now();
    const submissions = [];
    for (let i = 0; i < count; i++) {
      const due = start + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      const t0 = performance.now();
      submissions.push(
        master.request('POST', '/api/v1/workflows/run', { content, workflow_name: 'two-tasks' }).then(
          (r) => {
            if (r.status !== 202) errors.push(`${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
            else sentAt.set(r.body.id, t0);
          },
          (error) => errors.push(error.message),
        ),
      );
    }
    await Promise.all(submissions);
    return start;
  };
  const settle = async () => {
    const deadline = performance.now() + 30_000;
    while (performance.now() < deadline && [...sentAt.keys()].some((id) => !doneAt.has(id))) await sleep(20);
  };
  const errors = [];

  // Warm-up: the first runs pay for JIT and caches; then the open loop itself, unmeasured.
  for (let i = 0; i < 200; i++) await master.request('POST', '/api/v1/workflows/run', { content });
  await openLoop(Math.round(rate * warmupSeconds));
  await settle();
  await sleep(500);
  sentAt.clear();
  doneAt.clear();
  statuses.clear();
  errors.length = 0;

  const total = Math.round(rate * seconds);
  const cpuBefore = master.cpuMs();
  const start = await openLoop(total);
  await settle();
  const cpuPerRun = (master.cpuMs() - cpuBefore) / total;
  const elapsed = (Math.max(...doneAt.values()) - start) / 1000;
  const latencies = [...sentAt].filter(([id]) => doneAt.has(id)).map(([id, t0]) => doneAt.get(id) - t0);
  const failedRuns = [...statuses.values()].filter((s) => s !== 'succeeded').length;
  ws.close();
  Object.assign(result, {
    submitted: total,
    completed: latencies.length,
    failed_runs: failedRuns,
    request_errors: errors.length,
    runs_per_minute: round((latencies.length / elapsed) * 60, 0),
    p50_ms: round(percentile(latencies, 50)),
    p99_ms: round(percentile(latencies, 99)),
    max_ms: round(Math.max(...latencies)),
    // The master's CPU per run: comparable side by side even when the machine is busy, unlike the latencies.
    master_cpu_ms_per_run: round(cpuPerRun, 3),
  });
  if (errors.length) console.log(`first errors: ${errors.slice(0, 3).join(' | ')}`);
  console.log(
    `${result.completed}/${total} two-task runs at ${rate}/s: ${result.runs_per_minute} runs/min, submit to completion p50 ${result.p50_ms} ms, p99 ${result.p99_ms} ms (max ${result.max_ms}); ${failedRuns} failed runs, ${errors.length} request errors; master CPU ${result.master_cpu_ms_per_run} ms a run`,
  );
  result.meets_target =
    result.completed === total &&
    failedRuns === 0 &&
    result.runs_per_minute >= TARGET_PER_MINUTE * 0.98 &&
    result.p99_ms < TARGET_P99_MS;
  console.log(
    `target ${TARGET_PER_MINUTE} runs/min with p99 < ${TARGET_P99_MS} ms: ${result.meets_target ? 'met' : 'MISSED'}`,
  );
} catch (error) {
  failure = error;
} finally {
  await master.stop();
}
console.log(JSON.stringify({ bench: 'rest-throughput', ...result, ...(failure ? { error: String(failure) } : {}) }));
if (failure) {
  console.error(failure);
  process.exitCode = 1;
}
