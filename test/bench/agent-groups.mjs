// Agent groups at fleet size, against a real `runner server` (built) with AGENTS simulated agents
// (agent-sim.mjs: real agent clients, real protocol): adding every agent to a group in one request
// (what "Add to Group" on a whole selection sends), listing groups, the `?group=` filter of the
// agents list, and a run delegated to `group:all` against the same run naming every agent.
// Run: npm run build && node test/bench/agent-groups.mjs [--agents 1000] [--rounds 20]
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { percentile, round, startMaster, startSimAgents } from './support/master.mjs';

const { values } = parseArgs({
  options: { agents: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '20' } },
});
const agents = Number(values.agents);
const rounds = Number(values.rounds);
const names = Array.from({ length: agents }, (_, i) => `sim-${i}`);

const master = await startMaster({ env: { RUNNER_GRPC_BIND_ADDRESS: '127.0.0.1' } });
let sim;
const result = { agents, rounds };
try {
  const sims = startSimAgents(master, agents);
  sim = sims.child;
  await sims.ready;

  const ok = (r, what) => {
    if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r;
  };
  ok(await master.request('POST', '/api/v1/agent-groups', { name: 'all', description: 'every agent' }), 'create');
  const add = ok(await master.request('POST', '/api/v1/agent-groups/all/members', { agents: names }), 'add');
  result.add_all_ms = round(add.ms, 1);
  // Half the fleet in a second group, and 48 small groups: a list of 50 groups.
  ok(
    await master.request('POST', '/api/v1/agent-groups', { name: 'half', members: names.slice(0, agents / 2) }),
    'half',
  );
  for (let g = 0; g < 48; g++)
    ok(
      await master.request('POST', '/api/v1/agent-groups', {
        name: `g${g}`,
        members: names.slice(g * 10, g * 10 + 10),
      }),
      'g',
    );

  const timed = async (method, path, body) => {
    const ms = [];
    for (let i = 0; i < rounds; i++) ms.push(ok(await master.request(method, path, body), path).ms);
    return { p50: round(percentile(ms, 50), 1), p99: round(percentile(ms, 99), 1) };
  };
  result.list_groups_ms = await timed('GET', '/api/v1/agent-groups');
  result.agents_unfiltered_ms = await timed('GET', '/api/v1/agents?limit=1000');
  result.agents_in_half_ms = await timed('GET', '/api/v1/agents?group=half&limit=1000');

  // A run on every agent: through the group, then naming them all. Time to 202 (validation and
  // expansion) and to the end of the run.
  const run = async (target) => {
    const started = performance.now();
    const r = ok(
      await master.request('POST', '/api/v1/workflows/run', {
        content: `version: "1.0"\nforks: ${agents}\ntasks:\n  - name: ping\n    delegate_to: ${target}\n    exec:\n      script: return true\n`,
        workflow_name: 'groups-bench',
      }),
      'run',
    );
    const accepted = r.ms;
    for (;;) {
      const got = await master.request('GET', `/api/v1/executions/${r.body.id}?log=false`);
      if (got.body.status !== 'running') {
        if (got.body.status !== 'succeeded') throw new Error(`run ${got.body.status}: ${got.body.error ?? ''}`);
        return { accepted_ms: round(accepted, 1), total_ms: round(performance.now() - started, 0) };
      }
      await sleep(20);
    }
  };
  result.run_group = await run('group:all');
  result.run_names = await run(JSON.stringify(names));

  console.log(`${agents} simulated agents`);
  console.log(`add ${agents} agents to a group in one request: ${result.add_all_ms} ms`);
  console.log(
    `GET /agent-groups (50 groups, ${agents + agents / 2 + 480} memberships): p50 ${result.list_groups_ms.p50} ms, p99 ${result.list_groups_ms.p99} ms`,
  );
  console.log(
    `GET /agents?limit=1000: p50 ${result.agents_unfiltered_ms.p50} ms; ?group=half: p50 ${result.agents_in_half_ms.p50} ms`,
  );
  console.log(`run on group:all: 202 in ${result.run_group.accepted_ms} ms, done in ${result.run_group.total_ms} ms`);
  console.log(
    `run naming all ${agents}: 202 in ${result.run_names.accepted_ms} ms, done in ${result.run_names.total_ms} ms`,
  );
  console.log(JSON.stringify(result));
} finally {
  sim?.kill();
  await master.stop();
}
