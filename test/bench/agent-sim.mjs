// Lightweight agents for the agent benchmarks: COUNT connections to a master from this one
// process, each the real agent client (plugins/agent, built) speaking the real protocol, with
// stub handlers (a task succeeds at once, usage is fixed). Not a benchmark by itself.
//
//   node test/bench/agent-sim.mjs --master 127.0.0.1:50053 --token T --count 2000 [--prefix sim-]
//
// Prints JSON lines on stdout: {"ready":N,"ms":...} once every agent registered, then every
// --report seconds {"heartbeats":n,"seconds":s,"rtt_p50_ms":..,"rtt_p99_ms":..,"registered":N}.
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { AgentClient } from '../../plugins/agent/dist/src/client.js';

const { values } = parseArgs({
  options: {
    master: { type: 'string' },
    token: { type: 'string', default: '' },
    count: { type: 'string', default: '50' },
    prefix: { type: 'string', default: 'sim-' },
    report: { type: 'string', default: '1' },
    batch: { type: 'string', default: '100' },
  },
});
if (!values.master) {
  // run-all.mjs runs every script here: this one is a helper of the agent benchmarks.
  console.log(
    'agent-sim.mjs: a helper of agent-roundtrip, agent-fanout and agent-heartbeats; usage: --master host:port --token T --count N',
  );
  process.exit(0);
}
const count = Number(values.count);
const quiet = { debug() {}, info() {}, warn() {}, error: (m) => process.stderr.write(`${m}\n`), child: () => quiet };
let heartbeats = 0;
let rtts = [];
const handlers = {
  runTask: async () => ({ success: true, message: 'ok', outputs_json: '' }),
  // A fixed host: the master's metrics plugin asks every agent for it (memory and disk bytes).
  metrics: async () => ({
    metrics: {
      cpu: { cores: 4, usage_percent: 5, load_avg: [0.1, 0.1, 0.1] },
      memory: { total_bytes: 8e9, used_bytes: 2e9, usage_percent: 25 },
      disk: { total_bytes: 1e11, used_bytes: 2e10, usage_percent: 20 },
      network: { rx_bytes_per_sec: 0, tx_bytes_per_sec: 0 },
      processes: 100,
      uptime: process.uptime(),
      collected_at: new Date().toISOString(),
    },
    processes: [],
    network: [],
    disks: [],
  }),
  usage: () => ({ cpu_percent: 5, memory_percent: 10, disk_percent: 20, uptime: process.uptime() }),
  exec: async () => ({ stdout: '', stderr: '', exit_code: 0, exited: true, timed_out: false, duration: 0 }),
  logs: () => ({ recent: [] }),
  control: () => {},
};

const clients = [];
let registered = 0;
const started = performance.now();
let announced = false;
for (let i = 0; i < count; i++) {
  const client = new AgentClient({
    name: `${values.prefix}${i}`,
    master: values.master,
    token: values.token,
    version: 'sim',
    hostname: 'sim',
    os: 'sim',
    uptime: () => process.uptime(),
    modules: () => [],
    connectTimeoutMs: 30_000,
    reconnect: {
      initialDelayMs: 500,
      maxDelayMs: 5000,
      multiplier: 2,
      jitter: 0.5,
      maxRetries: 0,
      breakerFailures: 0,
      breakerResetMs: 1000,
    },
    logger: quiet,
    handlers,
    onHeartbeat: (ms) => {
      heartbeats++;
      rtts.push(ms);
    },
  });
  client.onRegistered(() => {
    registered++;
    if (!announced && registered >= count) {
      announced = true;
      process.stdout.write(`${JSON.stringify({ ready: registered, ms: Math.round(performance.now() - started) })}\n`);
    }
  });
  client.start();
  clients.push(client);
  // Ramp up in batches so the start is a burst, not one synchronous wall of handshakes.
  if ((i + 1) % Number(values.batch) === 0) await new Promise((resolve) => setTimeout(resolve, 20));
}

let windowStart = performance.now();
setInterval(
  () => {
    const now = performance.now();
    const sorted = rtts.sort((a, b) => a - b);
    const pick = (q) =>
      sorted.length ? +sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(2) : null;
    process.stdout.write(
      `${JSON.stringify({ heartbeats, seconds: +((now - windowStart) / 1000).toFixed(3), rtt_p50_ms: pick(0.5), rtt_p99_ms: pick(0.99), registered: clients.filter((c) => c.state === 'registered').length })}\n`,
    );
    heartbeats = 0;
    rtts = [];
    windowStart = now;
  },
  Number(values.report) * 1000,
);

const stop = async () => {
  await Promise.all(clients.map((c) => c.stop()));
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
