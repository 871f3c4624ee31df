// An idle agent: time from `runner agent start` (a fresh process) to registered on the master,
// and its resident memory once registered and after sitting idle. The master side runs built in
// this process. Targets: registered < 1 s, idle RSS < 80 MB.
// Run: npm run build && node test/bench/agent-idle.mjs [starts] [idle-seconds]
import { performance } from 'node:perf_hooks';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root, startAgentMaster, token } from './support/agent-master.mjs';

const starts = Number(process.argv[2] ?? 5);
const idleSeconds = Number(process.argv[3] ?? 15);
const { master, port } = await startAgentMaster();
const rss = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

function start(name) {
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [join(root, 'kernel/bin/runner.js'), 'agent', 'start', name, '--master', `127.0.0.1:${port}`, '--token', token],
    {
      env: { ...process.env, RUNNER_DATA_DIR: mkdtempSync(join(tmpdir(), 'runner-bench-agent-')) },
      stdio: 'ignore',
    },
  );
  return new Promise((resolveStart) => {
    const off = master.registry.onChange((agent) => {
      if (agent.name === name && agent.status !== 'offline') {
        off();
        resolveStart({ child, ms: performance.now() - t0 });
      }
    });
  });
}

const times = [];
let last;
for (let i = 0; i < starts; i++) {
  const { child, ms } = await start(`idle-${i}`);
  times.push(ms);
  if (i < starts - 1) {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  } else last = child;
}
const registeredRss = rss(last.pid);
const samples = [];
for (let s = 0; s < idleSeconds; s++) {
  await new Promise((r) => setTimeout(r, 1000));
  samples.push(rss(last.pid));
}
// Metrics wake systeminformation up; an agent that has been asked once stays this size.
await master.registry.metrics(`idle-${starts - 1}`);
await new Promise((r) => setTimeout(r, 1000));
const afterMetrics = rss(last.pid);
last.kill('SIGTERM');
await new Promise((r) => last.once('exit', r));
await master.close();

times.sort((a, b) => a - b);
const result = {
  starts,
  start_to_registered_ms_p50: Math.round(times[Math.floor(times.length / 2)]),
  start_to_registered_ms_max: Math.round(times[times.length - 1]),
  rss_mb_registered: +registeredRss.toFixed(1),
  rss_mb_idle: +samples[samples.length - 1].toFixed(1),
  rss_mb_idle_max: +Math.max(...samples).toFixed(1),
  idle_seconds: idleSeconds,
  rss_mb_after_metrics: +afterMetrics.toFixed(1),
};
console.log(
  `agent start to registered (${starts} fresh processes): p50 ${result.start_to_registered_ms_p50} ms, max ${result.start_to_registered_ms_max} ms  (target < 1 s: ${result.start_to_registered_ms_max < 1000 ? 'met' : 'MISSED'})`,
);
console.log(
  `idle agent RSS: ${result.rss_mb_registered} MB when registered, ${result.rss_mb_idle} MB after ${idleSeconds} s idle (max ${result.rss_mb_idle_max} MB), ${result.rss_mb_after_metrics} MB after a GetMetrics  (target < 80 MB: ${result.rss_mb_idle < 80 ? 'met' : 'MISSED'})`,
);
console.log(JSON.stringify({ bench: 'agent-idle', ...result, targets: { start_to_registered_ms: 1000, rss_mb: 80 } }));
