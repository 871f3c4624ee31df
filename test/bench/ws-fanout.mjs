// WebSocket fan-out: what 100 clients of /api/v1/ws cost a master running a 1,000-task workflow.
// A real `runner server`; the same run without clients, then with them. The master's CPU time is
// its own: utime + stime from /proc/<pid>/stat around each run.
// Latency is each message's receipt minus its event's `timestamp_ms` (same clock), measured by
// `--probes` full clients (the `ws` package, as a browser would) in a process of their own
// (support/ws-probes.mjs); the other clients, in this process, do the handshake and then read and
// drop the bytes. The master writes the same to all of them. Probes are few: one process handles
// its clients' messages in turn, so with ten the tenth client's copy of a batch waited for the
// other nine (p99 48 ms with ten, 8-9 ms with one or two, the same master and run).
// A run's end is seen by polling `GET /api/v1/executions?status=running&limit=0` (a count, cheap
// and the same in both phases); polling the whole 1,000-task record (210 KB, 15-30 ms to build)
// every 100 ms held the master's event loop in the measured window.
// Targets: CPU with clients at most 1.5x CPU without; event latency p99 under 10 ms.
//
//   node build.mjs && node test/bench/ws-fanout.mjs [--clients 100] [--probes 2] [--tasks 1000] [--runs 2]
//
// Prints readable lines, then one JSON line.
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { connect as tcpConnect } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { cpuMs, percentile, round, startMaster } from './support/master.mjs';

const TARGET_CPU_RATIO = 1.5;
const TARGET_P99_MS = 10;
const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '100' },
    probes: { type: 'string', default: '2' },
    tasks: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '2' },
  },
});
const clientCount = Number(values.clients);
const probeCount = Math.min(clientCount, Number(values.probes));
const taskCount = Number(values.tasks);
const runs = Number(values.runs);

let content = `version: "1.0"\nparallel: 1\ntasks:\n`;
for (let i = 1; i <= taskCount; i++) content += `  - name: t${i}\n    exec:\n      script: return true\n`;

/** How many runs of the bench's workflow are in `status` (a count: `limit=0` lists none). */
async function countRuns(master, status) {
  const r = await master.request('GET', `/api/v1/executions?workflow=fanout&status=${status}&limit=0`);
  if (r.status !== 200) throw new Error(`executions: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.total;
}

async function runOnce(master) {
  const succeededBefore = await countRuns(master, 'succeeded');
  const cpu0 = cpuMs(master.child.pid);
  const started = performance.now();
  const r = await master.request('POST', '/api/v1/workflows/run', { content, workflow_name: 'fanout' });
  if (r.status !== 202) throw new Error(`run: ${r.status} ${JSON.stringify(r.body)}`);
  do await sleep(100);
  while ((await countRuns(master, 'running')) > 0);
  const result = { cpuMs: cpuMs(master.child.pid) - cpu0, wallMs: performance.now() - started };
  if ((await countRuns(master, 'succeeded')) !== succeededBefore + 1) {
    const state = await master.request('GET', `/api/v1/executions/${r.body.id}?log=false`);
    throw new Error(`run ${r.body.id} ended ${state.body.status}`);
  }
  return result;
}

/** The probes' process; `latencies()` stops it and resolves with what its clients measured. */
async function startProbes(master, count) {
  const token = master.headers().authorization?.slice('Bearer '.length);
  const child = spawn(
    process.execPath,
    [
      join(import.meta.dirname, 'support/ws-probes.mjs'),
      `${master.base.replace('http', 'ws')}/api/v1/ws`,
      String(count),
    ],
    { env: { ...process.env, RUNNER_BENCH_TOKEN: token ?? '' }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await Promise.race([
    (async () => {
      while (!output.includes('ready')) await sleep(20);
    })(),
    exited.then((code) => {
      throw new Error(`the probes exited (${code}) before connecting`);
    }),
  ]);
  return {
    latencies: async () => {
      child.kill('SIGTERM');
      await exited;
      const line = output.split('\n').find((l) => l.startsWith('{'));
      if (!line) throw new Error(`the probes reported nothing: ${output}`);
      return JSON.parse(line).latencies;
    },
  };
}

/** A client that upgrades, then reads and drops everything: all of the master's work, little of ours. */
function connectRaw(master) {
  const { hostname, port } = new URL(master.base);
  const socket = tcpConnect(Number(port), hostname);
  const headers = Object.entries(master.headers())
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.write(
    `GET /api/v1/ws HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n${headers}\r\n`,
  );
  let bytes = 0;
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.once('data', (chunk) => {
      if (!chunk.toString('latin1').startsWith('HTTP/1.1 101')) reject(new Error(`upgrade refused: ${chunk}`));
      socket.on('data', (more) => (bytes += more.length));
      resolve({ ws: { terminate: () => socket.destroy() }, bytes: () => bytes });
    });
  });
}

const median = (xs) => percentile(xs, 50);
const master = await startMaster();
let failure;
const result = { clients: clientCount, probes: probeCount, tasks: taskCount, runs };
try {
  await runOnce(master); // warm-up: code paths compiled, store created
  const alone = [];
  for (let i = 0; i < runs; i++) alone.push(await runOnce(master));
  result.no_clients = {
    cpu_ms: round(median(alone.map((r) => r.cpuMs)), 0),
    wall_ms: round(median(alone.map((r) => r.wallMs)), 0),
  };
  console.log(`no clients: master CPU ${result.no_clients.cpu_ms} ms, wall ${result.no_clients.wall_ms} ms`);

  const probes = await startProbes(master, probeCount);
  const clients = await Promise.all(Array.from({ length: clientCount - probeCount }, () => connectRaw(master)));
  const withClients = [];
  for (let i = 0; i < runs; i++) withClients.push(await runOnce(master));
  // Messages still in flight when the run was seen ended.
  await sleep(500);
  const latencies = await probes.latencies();
  for (const { ws } of clients) ws.terminate();
  const messages = latencies.length;
  const rawBytes = clients.reduce((n, c) => n + c.bytes(), 0);
  result.with_clients = {
    cpu_ms: round(median(withClients.map((r) => r.cpuMs)), 0),
    wall_ms: round(median(withClients.map((r) => r.wallMs)), 0),
    probe_messages: messages,
    raw_client_bytes: rawBytes,
    latency_p50_ms: percentile(latencies, 50),
    latency_p99_ms: percentile(latencies, 99),
    latency_max_ms: percentile(latencies, 100),
  };
  result.cpu_ratio = round(result.with_clients.cpu_ms / result.no_clients.cpu_ms, 2);
  console.log(
    `${clientCount} clients: master CPU ${result.with_clients.cpu_ms} ms (${result.cpu_ratio}x), wall ${result.with_clients.wall_ms} ms, ${messages} messages to ${probeCount} probes (${Math.round(rawBytes / 1e6)} MB to the others), latency p50 ${result.with_clients.latency_p50_ms} ms, p99 ${result.with_clients.latency_p99_ms} ms`,
  );
  result.meets_target = result.cpu_ratio <= TARGET_CPU_RATIO && result.with_clients.latency_p99_ms < TARGET_P99_MS;
  console.log(
    `targets (CPU <= ${TARGET_CPU_RATIO}x, latency p99 < ${TARGET_P99_MS} ms): ${result.meets_target ? 'met' : 'MISSED'}`,
  );
} catch (error) {
  failure = error;
} finally {
  await master.stop();
}
console.log(JSON.stringify({ bench: 'ws-fanout', ...result, ...(failure ? { error: String(failure) } : {}) }));
if (failure) {
  console.error(failure);
  process.exitCode = 1;
}
