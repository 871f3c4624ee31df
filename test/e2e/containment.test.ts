// Issue 18 item 4 on a real master and agent (`runner server`, `runner agent start` on loopback):
// names a workflow or an enrolment chooses cannot reach a prototype or pose as the master, and
// what the master holds secret stays masked.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callApi,
  FAST_AGENTS,
  finished,
  runToEnd,
  spawnRunner,
  startFleet,
  stopAll,
  tempDataDir,
  type ApiRun,
  type FleetMaster,
} from './helpers.js';

const children: ReturnType<typeof spawnRunner>[] = [];
let fleet: FleetMaster;
let grpc = '';
beforeAll(async () => {
  const started = await startFleet('runner-e2e-contain', ['web-1'], children);
  fleet = started;
  grpc = started.grpc;
}, 60_000);
afterAll(() => stopAll(children));

const PROTO_NAMES = ['__proto__', 'constructor', 'toString'];

describe('names that are prototype keys', () => {
  it('run as tasks, vars, values, outputs and agent keys without polluting anything; GET /agents still answers', async () => {
    const tasks = PROTO_NAMES.map(
      (name, i) => `  - name: ${JSON.stringify(name)}
${i > 0 ? `    depends_on: [${JSON.stringify(PROTO_NAMES[i - 1])}]\n` : ''}    exec:
      script: |
        return true, tostring(vars["${name}"]), { ["${name}"] = "${name}-out", n = ${i} }
`,
    );
    const content = `version: "1.0"
vars: { "__proto__": p, "constructor": c, "toString": t }
values: { "__proto__": { a: 1 }, "web-1": { "constructor": v } }
tasks:
${tasks.join('')}  - name: after
    depends_on: ${JSON.stringify(PROTO_NAMES)}
    exec:
      script: |
        return true, tasks["__proto__"].status .. "," .. tasks["constructor"].outputs["constructor"] .. "," .. tasks["toString"].status
  - name: remote
    depends_on: [after]
    delegate_to: web-1
    exec:
      script: return true, tostring(values["constructor"]), { ["__proto__"] = 1, ["constructor"] = 2 }
`;
    const run = await runToEnd<ApiRun>(fleet, { content, workflow_name: 'proto-names' });
    expect(run.tasks.map((t) => [t.name, t.status])).toEqual([
      ['__proto__', 'succeeded'],
      ['constructor', 'succeeded'],
      ['toString', 'succeeded'],
      ['after', 'succeeded'],
      ['remote', 'succeeded'],
    ]);
    expect(run.tasks[3].message).toBe('succeeded,constructor-out,succeeded');
    expect(run.tasks[4].message).toBe('v');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const agents = await callApi<{ agents: { name: string }[] }>(fleet, 'GET', '/agents');
    expect(agents.status).toBe(200);
    expect(agents.body.agents.map((a) => a.name)).toEqual(['web-1']);
    const listed = await callApi<{ executions: unknown[] }>(fleet, 'GET', '/executions?workflow=proto-names');
    expect(listed.status).toBe(200);
  });
});

describe('agent names', () => {
  it('refuses reserved and look-alike names at enrolment, naming why', async () => {
    const { body } = await callApi<{ agents: { name: string; address?: string }[] }>(fleet, 'GET', '/agents');
    expect(body.agents.map((a) => a.name)).toEqual(['web-1']);
    const token = readFileSync(join(fleet.masterDir, 'agent-token'), 'utf8').trim();
    const master = grpc;
    for (const [name, why] of [
      ['localhost', /agent name "localhost" is reserved/],
      ['Master', /agent name "Master" is reserved/],
      ['WEB-1', /differs from the enrolled agent "web-1" only by case or a trailing dot/],
      ['web-1.', /differs from the enrolled agent "web-1" only by case or a trailing dot/],
    ] as const) {
      const agent = spawnRunner(['agent', 'start', name, '--master', master], {
        env: {
          RUNNER_DATA_DIR: tempDataDir('runner-e2e-contain-bad-'),
          RUNNER_JOIN_TOKEN: token,
          ...FAST_AGENTS,
          RUNNER_AGENT_RECONNECT_MAX_RETRIES: '1',
        },
      });
      children.push(agent);
      const end = await finished(agent);
      expect(`${end.stdout}${end.stderr}`, name).toMatch(why);
    }
    const after = await callApi<{ agents: { name: string }[] }>(fleet, 'GET', '/agents');
    expect(after.body.agents.map((a) => a.name)).toEqual(['web-1']);
  });

  it('runs delegate_to: localhost on the master itself', async () => {
    const run = await runToEnd<ApiRun>(fleet, {
      workflow_name: 'on-master',
      content: `version: "1.0"
tasks:
  - name: here
    delegate_to: localhost
    exec: { script: 'return true, "ran"' }
  - name: both
    delegate_to: [localhost, web-1]
    exec: { script: 'return true, "ran"' }
`,
    });
    expect(run.status).toBe('succeeded');
    expect(run.tasks.map((t) => [t.name, t.agent])).toEqual([
      ['here', 'localhost'],
      ['both@localhost', 'localhost'],
      ['both@web-1', 'web-1'],
    ]);
  });
});
