// state.* from a task delegated to an agent, against the same calls in a task on the master: each
// agent call is a round trip on the agent's stream to the master's store. A real `runner server`
// and a real `runner agent start`; a task makes N state.changed calls (alternately a change and no
// change), and the cost of one call is (that task's duration - an empty task's) / N, on the agent
// and on the master. No target in the issue; the figure says what forwarding costs.
//
//   npm run build && node test/bench/agent-state.mjs [--calls 500] [--rounds 3]
//
// Prints readable lines, then one JSON line.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { bin, round, startMaster } from './support/master.mjs';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '500' }, rounds: { type: 'string', default: '3' } },
});
const calls = Number(values.calls);
const rounds = Number(values.rounds);

const master = await startMaster({ env: { RUNNER_GRPC_BIND_ADDRESS: '127.0.0.1' } });
const token = readFileSync(join(master.dataDir, 'agent-token'), 'utf8').trim();
const agent = spawn(process.execPath, [bin, 'agent', 'start', 'bench-1', '--master', `127.0.0.1:${master.grpcPort}`], {
  env: {
    ...process.env,
    RUNNER_DATA_DIR: mkdtempSync(join(tmpdir(), 'runner-bench-agent-')),
    RUNNER_JOIN_TOKEN: token,
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
try {
  await new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`the agent did not register in 30 s: ${output}`)), 30_000);
    const onData = (chunk) => {
      output += chunk;
      if (output.includes('registered with master')) {
        clearTimeout(timer);
        resolve();
      }
    };
    agent.stdout.on('data', onData);
    agent.stderr.on('data', onData);
  });

  const workflow = (where) => `version: "1.0"
parallel: 1
tasks:
  - name: empty
${where}    exec:
      script: return true
  - name: calls
${where}    exec:
      script: |
        for i = 1, ${calls} do state.changed("k" .. (i % 7), math.floor(i / 2)) end
        return true
`;
  const perCall = async (where) => {
    const started = await master.request('POST', '/api/v1/workflows/run', {
      content: workflow(where),
      workflow_name: 'state-bench',
    });
    if (started.status !== 202) throw new Error(`run: ${started.status} ${JSON.stringify(started.body)}`);
    for (;;) {
      const { body: run } = await master.request('GET', `/api/v1/executions/${started.body.id}`);
      if (run.status === 'running' || run.status === 'pending') {
        await sleep(50);
        continue;
      }
      if (run.status !== 'succeeded') throw new Error(`run ${run.status}: ${JSON.stringify(run.tasks)}`);
      const [empty, busy] = ['empty', 'calls'].map((name) => run.tasks.find((t) => t.task === name).duration);
      return ((busy - empty) * 1000) / calls;
    }
  };

  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const agentMs = [];
  const masterMs = [];
  for (let i = 0; i < rounds; i++) {
    agentMs.push(await perCall('    delegate_to: bench-1\n'));
    masterMs.push(await perCall(''));
  }
  const result = {
    calls,
    rounds,
    agent_ms_per_call: round(median(agentMs), 3),
    master_ms_per_call: round(median(masterMs), 3),
    agent_runs: agentMs.map((x) => round(x, 3)),
    master_runs: masterMs.map((x) => round(x, 3)),
  };
  console.log(`state.changed from a task on the agent: ${result.agent_ms_per_call} ms per call (median of ${rounds})`);
  console.log(`state.changed from a task on the master: ${result.master_ms_per_call} ms per call`);
  console.log(JSON.stringify(result));
} finally {
  agent.kill('SIGTERM');
  await master.stop();
}
