// The durable event queue with one trivial hook (`return true` on task.completed): a master kernel
// booted in this process (the built runtime: `node build.mjs` first), synthetic task.completed events
// emitted on its bus, each stored, claimed, run through the hook (its Lua through the engine's door,
// its execution kept in the history) and completed.
//
//   node test/bench/event-queue.mjs [--events 20000] [--rate 1000] [--seconds 3] [--pg postgres://...] [--profile out.cpuprofile]
//
// --profile writes a V8 CPU profile of the throughput phase alone (start-up and the latency phase left out).
//
// Throughput: every event emitted at once, events/s until the last completed (target 5,000/s on the
// embedded store). Latency: events at --rate for --seconds, p50/p99 from the event's emission to its
// hook's start (the claim of the hook's run, in the database), target p99 under 50 ms.
// Prints readable lines, then one JSON line with every figure.
import { mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

const root = resolve(import.meta.dirname, '../..');
const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '20000' },
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '3' },
    pg: { type: 'string' },
    profile: { type: 'string' },
  },
});
const [kernelApi, sdk] = await Promise.all([
  import(join(root, 'kernel/dist/index.js')),
  import(join(root, 'plugin-sdk/dist/index.js')),
]).catch((error) => {
  console.error(`cannot load the built kernel: run \`node build.mjs\` first (${error.message})`);
  process.exit(1);
});

const quiet = {
  debug() {},
  info() {},
  warn: (m) => console.error(`warn: ${m}`),
  error: (m) => console.error(`error: ${m}`),
};
quiet.child = () => quiet;

const dataDir = mkdtempSync(join(tmpdir(), 'runner-bench-events-'));
const plugins = await kernelApi.discoverPlugins({ builtinDir: kernelApi.builtinPluginsDir });
const env = {
  RUNNER_HTTP_PORT: '0',
  RUNNER_HTTP_BIND_ADDRESS: '127.0.0.1',
  RUNNER_GRPC_PORT: '0',
  RUNNER_EVENTS_CONCURRENCY: '256',
  ...(values.pg ? { RUNNER_STORE_URL: values.pg } : {}),
};
const kernel = await kernelApi.bootKernel({
  profile: 'master',
  plugins,
  config: await kernelApi.loadConfig({ dataDir, env }, plugins),
  logger: quiet,
  kernelVersion: kernelApi.kernelVersion,
});
const store = kernel.get(sdk.StoreRef);
const port = kernel.get(sdk.HttpRouterRef).address().port;
const { readFileSync } = await import('node:fs');
const token = readFileSync(join(dataDir, 'auth', 'local.token'), 'utf8').trim();
const created = await fetch(`http://127.0.0.1:${port}/api/v1/hooks`, {
  method: 'POST',
  headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  body: JSON.stringify({ name: 'trivial', event_type: 'task.completed', script: 'return true' }),
});
if (created.status !== 201) throw new Error(`creating the hook: ${created.status} ${await created.text()}`);

const payload = (i) => ({
  workflow_name: 'bench',
  run_id: `r-bench-${i}`,
  task_name: `t${i}`,
  agent: 'localhost',
  status: 'succeeded',
  attempt: 1,
  duration: 0,
});
const unfinished = async () =>
  (await store.get("SELECT COUNT(*) AS n FROM events WHERE status IN ('pending', 'processing')")).n;
async function drained(ceilingMs) {
  const deadline = Date.now() + ceilingMs;
  while ((await unfinished()) > 0) {
    if (Date.now() > deadline) throw new Error('events still unfinished at the ceiling');
    await sleep(20);
  }
}
const percentile = (xs, p) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
};

/** A CPU profile of this process (the master) from now until `stop(file)`. */
async function startProfile() {
  const { Session } = await import('node:inspector/promises');
  const { writeFileSync } = await import('node:fs');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    async stop(file) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

try {
  // Throughput: every event at once (in chunks, so the bus is not one long turn).
  const total = Number(values.events);
  // The master's CPU time per event (this process is the master): unlike events/s, it does not
  // swing with other work on the machine.
  const profiler = values.profile ? await startProfile() : undefined;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < total; i += 500) {
    for (let j = i; j < Math.min(total, i + 500); j++) kernel.events.emit('task.completed', payload(j));
    await new Promise((r) => setImmediate(r));
  }
  await drained(600_000);
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = process.cpuUsage(cpu0);
  const cpuUsPerEvent = (cpu1.user + cpu1.system) / total;
  await profiler?.stop(values.profile);
  const failed = (await store.get("SELECT COUNT(*) AS n FROM events WHERE status = 'failed'")).n;
  const throughput = total / seconds;

  // Latency at a steady rate: emission to the hook's claimed start.
  const since = Date.now();
  const rate = Number(values.rate);
  const duration = Number(values.seconds) * 1000;
  const start = performance.now();
  let sent = 0;
  while (performance.now() - start < duration) {
    const due = Math.floor(((performance.now() - start) / 1000) * rate);
    for (; sent < due; sent++) kernel.events.emit('task.completed', payload(total + sent));
    await sleep(5);
  }
  await drained(120_000);
  const rows = await store.all(
    `SELECT r.started_at - e.emitted_at AS ms FROM event_hook_results r JOIN events e ON e.id = r.event_id
     WHERE e.emitted_at >= ?`,
    [since],
  );
  const latencies = rows.map((r) => Number(r.ms));
  const figures = {
    backend: values.pg ? 'postgres' : 'embedded',
    cores: cpus().length,
    load_average: +loadavg()[0].toFixed(2),
    events: total,
    failed,
    events_per_second: Math.round(throughput),
    cpu_us_per_event: Math.round(cpuUsPerEvent),
    latency_events: latencies.length,
    rate_per_second: rate,
    p50_ms: percentile(latencies, 50),
    p99_ms: percentile(latencies, 99),
  };
  console.log(
    `event queue (${figures.backend}; ${figures.cores} cores, load average ${figures.load_average}: other work skews every figure)`,
  );
  console.log(
    `  throughput: ${total} events with a trivial hook in ${seconds.toFixed(2)} s: ${figures.events_per_second} events/s (target 5,000); master CPU ${figures.cpu_us_per_event} µs per event (5,000/s needs under 200 on one core)`,
  );
  console.log(
    `  event to hook start at ${rate}/s: p50 ${figures.p50_ms} ms, p99 ${figures.p99_ms} ms (target p99 < 50 ms)`,
  );
  console.log(JSON.stringify(figures));
} finally {
  await kernel.stop('bench finished');
}
