// What a flooding task costs a master (issue 18 item 5): `runner server` with its defaults (a root
// master runs such tasks in its local executor, as runner-exec), `GET /api/v1/health` every
// --interval-ms over one keep-alive connection while one task at a time floods: `exec.run("yes")`,
// a script printing 1 GiB in 1 KiB lines, a script printing 16.7 M short lines. Each task has a
// timeout of --timeout seconds. For each: health latency (p50, p99, max), how long the task ran
// against its timeout, its status and message, and how much the master's log (runner.log) grew.
// Not a pass/fail test: the figures for the README; the machine's load averages are printed too.
//
//   node build.mjs && node test/bench/workflow-floods.mjs [--timeout 10] [--interval-ms 20]
//
// Prints readable lines, then one JSON line.
import { statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { percentile, round, startMaster } from './support/master.mjs';

const { values } = parseArgs({
  options: { timeout: { type: 'string', default: '10' }, 'interval-ms': { type: 'string', default: '20' } },
});
const timeoutS = Number(values.timeout);
const intervalMs = Number(values['interval-ms']);

const FLOODS = {
  yes: 'local r = exec.run("yes") return r.success',
  print_1gib: 'local s = string.rep("x", 1023) for i = 1, 1048576 do print(s) end return true',
  lines_16m: 'for i = 1, 16777216 do print(i) end return true',
};

const workflow = (script) => `version: "1.0"
tasks:
  - name: flood
    timeout: ${timeoutS}s
    exec:
      script: |
        ${script}
`;

const master = await startMaster();
const logFile = join(master.dataDir, 'logs', 'runner.log');
const logBytes = () => {
  try {
    return statSync(logFile).size;
  } catch {
    return 0;
  }
};
const results = {};
try {
  for (const [name, script] of Object.entries(FLOODS)) {
    const logBefore = logBytes();
    const load = loadavg().map((x) => round(x, 1));
    const started = await master.request('POST', '/api/v1/workflows/run', {
      workflow_name: `flood-${name}`,
      content: workflow(script),
    });
    if (started.status !== 202) throw new Error(`${name}: ${started.status} ${JSON.stringify(started.body)}`);
    const latencies = [];
    let run;
    const deadline = performance.now() + (timeoutS + 60) * 1000;
    for (;;) {
      const health = await master.request('GET', '/api/v1/health');
      latencies.push(health.ms);
      if (latencies.length % 10 === 0) {
        run = (await master.request('GET', `/api/v1/executions/${started.body.id}`)).body;
        if (run.status !== 'running' && run.status !== 'pending') break;
      }
      if (performance.now() > deadline) throw new Error(`${name}: the run did not end within ${timeoutS + 60} s`);
      await sleep(intervalMs);
    }
    const task = run.tasks[0];
    results[name] = {
      load_before: load,
      health_requests: latencies.length,
      health_p50_ms: round(percentile(latencies, 50)),
      health_p99_ms: round(percentile(latencies, 99)),
      health_max_ms: round(Math.max(...latencies)),
      task_status: task.status,
      task_seconds: task.duration,
      timeout_seconds: timeoutS,
      task_message: String(task.message ?? '').slice(0, 160),
      log_truncated: task.log_truncated,
      runner_log_growth_bytes: logBytes() - logBefore,
    };
    const r = results[name];
    console.log(
      `${name}: health p50 ${r.health_p50_ms} ms, p99 ${r.health_p99_ms} ms, max ${r.health_max_ms} ms (${r.health_requests} requests); ` +
        `task ${r.task_status} after ${r.task_seconds} s (timeout ${timeoutS} s): ${r.task_message}; runner.log +${r.runner_log_growth_bytes} bytes; load ${load.join(' ')}`,
    );
  }
} finally {
  await master.stop();
}
console.log(JSON.stringify({ bench: 'workflow-floods', timeout_seconds: timeoutS, interval_ms: intervalMs, results }));
