// state.* from a task delegated to an agent, against the same calls in a task on the master: each
// agent call is a round trip on the agent's stream to the master's store. A real `runner server`
// and a real `runner agent start`; one task makes N state.changed calls (alternately a change, which
// is a durable write, and no change), another N state.get calls, and the cost of one call is (that
// task's duration - an empty task's) / N, on the agent and on the master. No target in the issue;
// the figures say what forwarding costs (get: the round trip alone).
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
  - name: reads
${where}    exec:
      script: |
        for i = 1, ${calls} do state.get("k" .. (i % 7)) end
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
      const [empty, writes, reads] = ['empty', 'calls', 'reads'].map(
        (name) => run.tasks.find((t) => t.task === name).duration,
      );
      return { changed: ((writes - empty) * 1000) / calls, get: ((reads - empty) * 1000) / calls };
    }
  };

  const median = (xs) => round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)], 3);
  const agentRuns = [];
  const masterRuns = [];
  for (let i = 0; i < rounds; i++) {
    agentRuns.push(await perCall('    delegate_to: bench-1\n'));
    masterRuns.push(await perCall(''));
  }
  const result = { calls, rounds };
  for (const fn of ['changed', 'get']) {
    result[`agent_${fn}_ms`] = median(agentRuns.map((r) => r[fn]));
    result[`master_${fn}_ms`] = median(masterRuns.map((r) => r[fn]));
    console.log(
      `state.${fn}: ${result[`agent_${fn}_ms`]} ms per call from a task on the agent, ${result[`master_${fn}_ms`]} ms on the master (median of ${rounds})`,
    );
  }
  console.log(JSON.stringify(result));
} finally {
  agent.kill('SIGTERM');
  await master.stop();
}
