// One task fanned out to 50 agents: the master side (built, in this process) runs `return true`
// on every agent at once and waits for all results. The agents are 50 real connections from one
// helper process (agent-sim.mjs: the agent client with a stub handler). Target: < 1 s.
// Run: npm run build && node test/bench/agent-fanout.mjs [agents] [rounds]
/* global AbortController */
import { performance } from 'node:perf_hooks';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { root, startAgentMaster, token } from './support/agent-master.mjs';

const agents = Number(process.argv[2] ?? 50);
const rounds = Number(process.argv[3] ?? 50);
const { master, port } = await startAgentMaster();

const connectStarted = performance.now();
const sim = spawn(
  process.execPath,
  [
    join(root, 'test/bench/agent-sim.mjs'),
    '--master',
    `127.0.0.1:${port}`,
    '--token',
    token,
    '--count',
    String(agents),
    '--report',
    '3600',
  ],
  {
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
await new Promise((r) => createInterface({ input: sim.stdout }).on('line', (line) => line.includes('"ready"') && r()));
const connectMs = performance.now() - connectStarted;
const names = master.registry.list().map((a) => a.name);
if (names.length !== agents) throw new Error(`expected ${agents} agents, the master has ${names.length}`);

const task = {
  runId: 'bench',
  workflowName: 'bench',
  task: 'fan',
  unit: 'fan',
  script: 'return true',
  globals: { vars: { app: 'web' } },
  dryRun: false,
  attempt: 1,
};
const times = [];
for (let round = 0; round < rounds + 3; round++) {
  const t0 = performance.now();
  const results = await Promise.all(
    names.map((name) =>
      master.delegator.execute(
        name,
        { ...task, unit: `fan@${name}` },
        { signal: new AbortController().signal, onLog: () => {} },
      ),
    ),
  );
  const ms = performance.now() - t0;
  if (results.some((r) => !r.success)) throw new Error('a task failed');
  if (round >= 3) times.push(ms); // the first rounds warm the connections up
}
sim.kill('SIGTERM');
await master.close();

times.sort((a, b) => a - b);
const pick = (q) => +times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(2);
const result = {
  agents,
  rounds,
  p50_ms: pick(0.5),
  p99_ms: pick(0.99),
  max_ms: +times[times.length - 1].toFixed(2),
  connect_all_ms: Math.round(connectMs),
};
console.log(
  `one task fanned out to ${agents} agents (${rounds} rounds): p50 ${result.p50_ms} ms  p99 ${result.p99_ms} ms  max ${result.max_ms} ms`,
);
console.log(`  (${agents} agent connections registered in ${result.connect_all_ms} ms, helper process start included)`);
console.log(`target < 1 s: ${result.max_ms < 1000 ? 'met' : 'MISSED'} (max ${result.max_ms} ms)`);
console.log(JSON.stringify({ bench: 'agent-fanout', ...result, target_ms: 1000 }));
