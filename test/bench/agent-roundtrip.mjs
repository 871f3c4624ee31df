// Delegated task round trip on loopback: the master side of the transport (built, in this
// process) sends `return true` to an agent and waits for the result, one task at a time.
//   - real agent: a `runner agent start` process, so the figure includes its Lua runtime;
//   - transport only: the agent client with a stub handler (agent-sim.mjs), the protocol alone.
// Targets: p50 < 5 ms, p99 < 20 ms. Run: npm run build && node test/bench/agent-roundtrip.mjs [tasks]
/* global AbortController */
import { performance } from 'node:perf_hooks';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { root, startAgentMaster, token } from './support/agent-master.mjs';

const tasks = Number(process.argv[2] ?? 2000);
const warmup = 200;
const { master, port } = await startAgentMaster();
const address = `127.0.0.1:${port}`;

function online(name) {
  return new Promise((resolveOnline) => {
    if (master.delegator.isAvailable(name)) return resolveOnline();
    const off = master.registry.onChange((a) => {
      if (a.name === name && a.status !== 'offline') {
        off();
        resolveOnline();
      }
    });
  });
}

async function measure(agent) {
  const task = {
    runId: 'bench',
    workflowName: 'bench',
    task: 'noop',
    unit: 'noop',
    script: 'return true',
    globals: { vars: {} },
    dryRun: false,
    attempt: 1,
  };
  const options = { signal: new AbortController().signal, onLog: () => {} };
  const times = [];
  for (let i = 0; i < warmup + tasks; i++) {
    const t0 = performance.now();
    const result = await master.delegator.execute(agent, task, options);
    if (!result.success) throw new Error(`task failed on ${agent}: ${result.message}`);
    if (i >= warmup) times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const pick = (q) => +times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(3);
  return {
    tasks,
    p50_ms: pick(0.5),
    p90_ms: pick(0.9),
    p99_ms: pick(0.99),
    max_ms: +times[times.length - 1].toFixed(3),
    per_second: Math.round(tasks / (times.reduce((a, b) => a + b, 0) / 1000)),
  };
}

const children = [];
// A real agent process.
const agent = spawn(
  process.execPath,
  [join(root, 'kernel/bin/runner.js'), 'agent', 'start', 'bench-agent', '--master', address, '--token', token],
  {
    env: { ...process.env, RUNNER_DATA_DIR: mkdtempSync(join(tmpdir(), 'runner-bench-agent-')) },
    stdio: ['ignore', 'ignore', 'ignore'],
  },
);
children.push(agent);
await online('bench-agent');
const real = await measure('bench-agent');

// The protocol alone: one stub agent in a helper process.
const sim = spawn(
  process.execPath,
  [
    join(root, 'test/bench/agent-sim.mjs'),
    '--master',
    address,
    '--token',
    token,
    '--count',
    '1',
    '--prefix',
    'stub-',
    '--report',
    '3600',
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
children.push(sim);
await new Promise((r) => createInterface({ input: sim.stdout }).on('line', (line) => line.includes('"ready"') && r()));
const stub = await measure('stub-0');

for (const child of children) child.kill('SIGTERM');
await master.close();

const verdict = (r) => `${r.p50_ms < 5 ? 'met' : 'MISSED'} p50 < 5 ms, ${r.p99_ms < 20 ? 'met' : 'MISSED'} p99 < 20 ms`;
console.log(`delegated task round trip, ${tasks} sequential tasks after ${warmup} warm-up, loopback:`);
console.log(
  `  real agent (Lua runtime): p50 ${real.p50_ms} ms  p90 ${real.p90_ms} ms  p99 ${real.p99_ms} ms  max ${real.max_ms} ms  ${real.per_second}/s  (${verdict(real)})`,
);
console.log(
  `  transport only (stub):    p50 ${stub.p50_ms} ms  p90 ${stub.p90_ms} ms  p99 ${stub.p99_ms} ms  max ${stub.max_ms} ms  ${stub.per_second}/s  (${verdict(stub)})`,
);
console.log(
  JSON.stringify({
    bench: 'agent-roundtrip',
    real_agent: real,
    transport_only: stub,
    targets: { p50_ms: 5, p99_ms: 20 },
  }),
);
