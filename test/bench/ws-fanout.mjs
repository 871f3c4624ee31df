// WebSocket fan-out: what 100 clients of /api/v1/ws cost a master running a 1,000-task workflow.
// A real `runner server`; the same run without clients, then with them (in this process, so the
// master's CPU time is its own: utime + stime from /proc/<pid>/stat around each run).
// Latency is each message's receipt minus its event's `timestamp_ms` (same clock), measured by
// `--probes` full clients (the `ws` package, as a browser would); the other clients do the
// handshake and then read and drop the bytes, so that decoding 100 streams in this one process
// (on a 2-core machine) does not measure this process instead of the master. The master writes
// the same to all of them.
// Targets: CPU with clients at most 1.5x CPU without; event latency p99 under 10 ms.
//
//   node build.mjs && node test/bench/ws-fanout.mjs [--clients 100] [--probes 10] [--tasks 1000] [--runs 2]
//
// Prints readable lines, then one JSON line.
import { randomBytes } from 'node:crypto';
import { connect as tcpConnect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';
import { cpuMs, percentile, round, startMaster } from './support/master.mjs';

const TARGET_CPU_RATIO = 1.5;
const TARGET_P99_MS = 10;
const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '100' },
    probes: { type: 'string', default: '10' },
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

async function runOnce(master) {
  const cpu0 = cpuMs(master.child.pid);
  const started = performance.now();
  const r = await master.request('POST', '/api/v1/workflows/run', { content, workflow_name: 'fanout' });
  if (r.status !== 202) throw new Error(`run: ${r.status} ${JSON.stringify(r.body)}`);
  for (;;) {
    const state = await master.request('GET', `/api/v1/executions/${r.body.id}`);
    if (state.body.status !== 'running') {
      if (state.body.status !== 'succeeded') throw new Error(`run ${r.body.id} ended ${state.body.status}`);
      break;
    }
    await sleep(100);
  }
  return { cpuMs: cpuMs(master.child.pid) - cpu0, wallMs: performance.now() - started };
}

function connect(master, latencies) {
  const url = `${master.base.replace('http', 'ws')}/api/v1/ws`;
  const ws = new WebSocket(url, { headers: master.headers() });
  let received = 0;
  ws.on('message', (data) => {
    const now = Date.now();
    const text = String(data);
    // Only the timestamp matters here: no full parse, so the clients cost this process little.
    const at = text.indexOf('"timestamp_ms":');
    if (at >= 0) latencies.push(now - Number.parseInt(text.slice(at + 15), 10));
    received++;
  });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, received: () => received }));
    ws.once('error', reject);
  });
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
      resolve({ ws: { terminate: () => socket.destroy() }, received: () => 0, bytes: () => bytes });
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

  const latencies = [];
  const clients = await Promise.all(
    Array.from({ length: clientCount }, (_, i) => (i < probeCount ? connect(master, latencies) : connectRaw(master))),
  );
  const withClients = [];
  for (let i = 0; i < runs; i++) withClients.push(await runOnce(master));
  // Messages still in flight when the run was seen ended.
  await sleep(500);
  for (const { ws } of clients) ws.terminate();
  const messages = clients.reduce((n, c) => n + c.received(), 0);
  const rawBytes = clients.reduce((n, c) => n + (c.bytes?.() ?? 0), 0);
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
