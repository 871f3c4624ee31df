// A master absorbing heartbeats: a real `runner server` process, and 2,000 simulated agents in a
// separate process (agent-sim.mjs: real agent clients, one connection each) heartbeating every
// second. Reports heartbeats per second acknowledged, heartbeat round trip, the master's CPU and
// memory, and how long 2,000 registrations took. Heartbeat data is persisted every 5 s (instead
// of 30) so the window includes store writes.
// Run: npm run build && node test/bench/agent-heartbeats.mjs [agents] [seconds]
import { performance } from 'node:perf_hooks';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

const agents = Number(process.argv[2] ?? 2000);
const seconds = Number(process.argv[3] ?? 20);
const root = resolve(import.meta.dirname, '../..');
const dataDir = mkdtempSync(join(tmpdir(), 'runner-bench-master-'));
const ticks = 100; // getconf CLK_TCK on Linux

const master = spawn(
  process.execPath,
  [join(root, 'kernel/bin/runner.js'), 'server', '--http-port', '0', '--bind-address', '127.0.0.1', '--port', '0'],
  {
    env: {
      ...process.env,
      RUNNER_DATA_DIR: dataDir,
      RUNNER_GRPC_BIND_ADDRESS: '127.0.0.1',
      RUNNER_AGENT_HEARTBEAT_INTERVAL: '1',
      RUNNER_AGENT_HEARTBEAT_TIMEOUT: '10',
      RUNNER_AGENT_PERSIST_INTERVAL: '5',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  },
);
let masterOutput = '';
master.stdout.on('data', (d) => (masterOutput += d));
const port = await new Promise((resolvePort, reject) => {
  master.stderr.on('data', (d) => {
    masterOutput += d;
    const match = /gRPC listening on 127\.0\.0\.1:(\d+)/.exec(masterOutput);
    if (match) resolvePort(Number(match[1]));
  });
  master.once('exit', () => reject(new Error(`the master exited:\n${masterOutput}`)));
});
const token = readFileSync(join(dataDir, 'agent-token'), 'utf8').trim();

function usage(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpu = (Number(fields[11]) + Number(fields[12])) / ticks; // utime + stime, seconds
  const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
  return { cpu, rss };
}

const baseline = usage(master.pid);
const connectStarted = performance.now();
const sim = spawn(
  process.execPath,
  [
    '--max-old-space-size=4096',
    join(root, 'test/bench/agent-sim.mjs'),
    '--master',
    `127.0.0.1:${port}`,
    '--token',
    token,
    '--count',
    String(agents),
    '--report',
    '1',
  ],
  {
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
const reports = [];
let ready;
const readyAt = new Promise((r) => (ready = r));
createInterface({ input: sim.stdout }).on('line', (line) => {
  const message = JSON.parse(line);
  if (message.ready) ready(performance.now() - connectStarted);
  else reports.push(message);
});
const registerMs = await readyAt;
const afterRegistration = usage(master.pid);
// Settle: let every agent's heartbeat phase spread out, then measure.
await new Promise((r) => setTimeout(r, 3000));
reports.length = 0;
const before = usage(master.pid);
const t0 = performance.now();
let peakRss = before.rss;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, usage(master.pid).rss)), 500);
await new Promise((r) => setTimeout(r, seconds * 1000));
clearInterval(sampler);
const after = usage(master.pid);
const wall = (performance.now() - t0) / 1000;
const window = reports.slice();
sim.kill('SIGTERM');
await new Promise((r) => sim.once('exit', r));
master.kill('SIGTERM');
await new Promise((r) => master.once('exit', r));

const beats = window.reduce((sum, r) => sum + r.heartbeats, 0);
const span = window.reduce((sum, r) => sum + r.seconds, 0);
const p50s = window
  .map((r) => r.rtt_p50_ms)
  .filter((x) => x !== null)
  .sort((a, b) => a - b);
const p99s = window
  .map((r) => r.rtt_p99_ms)
  .filter((x) => x !== null)
  .sort((a, b) => a - b);
const result = {
  agents,
  seconds: +wall.toFixed(1),
  heartbeats_per_second: Math.round(beats / span),
  expected_per_second: agents,
  heartbeat_rtt_p50_ms: p50s[Math.floor(p50s.length / 2)],
  heartbeat_rtt_p99_ms_worst_second: p99s[p99s.length - 1],
  master_cpu_percent: +(((after.cpu - before.cpu) / wall) * 100).toFixed(1),
  master_rss_mb_idle: +(baseline.rss / 1048576).toFixed(1),
  master_rss_mb: +(after.rss / 1048576).toFixed(1),
  master_rss_mb_peak: +(peakRss / 1048576).toFixed(1),
  register_all_ms: Math.round(registerMs),
  master_cpu_seconds_registering: +(afterRegistration.cpu - baseline.cpu).toFixed(2),
  still_registered: window.at(-1)?.registered,
};
console.log(
  `${agents} simulated agents heartbeating every second into one master (${result.seconds} s window, 2 cores shared by both processes):`,
);
console.log(
  `  heartbeats absorbed: ${result.heartbeats_per_second}/s (expected ${agents}/s); round trip p50 ${result.heartbeat_rtt_p50_ms} ms, worst per-second p99 ${result.heartbeat_rtt_p99_ms_worst_second} ms`,
);
console.log(
  `  master CPU: ${result.master_cpu_percent}% of one core; RSS ${result.master_rss_mb_idle} MB idle -> ${result.master_rss_mb} MB (peak ${result.master_rss_mb_peak} MB)`,
);
console.log(
  `  registration of all ${agents}: ${result.register_all_ms} ms (master CPU ${result.master_cpu_seconds_registering} s); connected at the end: ${result.still_registered}`,
);
console.log(JSON.stringify({ bench: 'agent-heartbeats', ...result }));
