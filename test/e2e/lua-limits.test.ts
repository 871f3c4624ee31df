// Scripts that cannot take the master down, with real processes and the DEFAULT configuration
// (lua.isolation: auto, nothing opted into): a `runner server` master and one `runner agent start`
// agent (web-1). Each hostile script is one auto sends to a Lua worker (it loops, or calls
// string.rep / string.find), while the trivial run beside it is proven bounded and runs inline.
// The issue's 1e8-entry table fails its task at the memory limit (the workflow's memory_limit: on
// the master, and on the agent, which gets it with the task) and a backtracking string.find is ended at its timeout, on the master and on the agent, while
// GET /health keeps answering and a run started meanwhile succeeds. A script asking string.rep for
// 1 GiB fails its task with the memory-limit message, on the master and on the agent (the agent's
// 512 MiB default, the workflow setting none); runner.log
// has the message; so does a doubling `s = s .. s`, stopped by `..`'s own size check. A spinning script is stopped by its timeout and the master serves meanwhile.
// Inline (lua.isolation: inline, chosen), the 1e8-entry table runs on a master whose heap is capped
// at 384 MiB (NODE_OPTIONS) and its heap guard at 40% (lua.heap_guard_ratio), so that the guard is
// reached in seconds: the task fails with `not enough memory` and the master goes on.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiRun, fetchAs, spawnRunner, startFleet, stopAll, tempDataDir, waitForOutput } from './helpers.js';

type Child = ReturnType<typeof spawnRunner>;

const children: Child[] = [];
let masterDir: string;
let base: string;
let call: ReturnType<typeof fetchAs>;

beforeAll(async () => {
  // No lua.isolation given: the default (auto) must protect the master and the agent by itself.
  // The suite's own environment must not choose for it either.
  delete process.env.RUNNER_LUA_ISOLATION;
  ({ masterDir, base } = await startFleet('runner-e2e-lua-limits', ['web-1'], children));
  call = fetchAs(masterDir);
}, 60_000);

afterAll(() => {
  stopAll(children);
});

async function start(content: string, name: string): Promise<string> {
  const response = await call(`${base}/workflows/run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ content, workflow_name: name }),
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
}

async function finish(id: string): Promise<ApiRun> {
  for (;;) {
    const run = (await (await call(`${base}/executions/${id}`)).json()) as ApiRun;
    if (run.status !== 'running') return run;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * GET /health one request at a time until `until` settles (and at least 20 in all): the latencies
 * in ms, and how many answers came while `until` was still pending. A loop held by the script
 * would answer at most the one request in flight while it was held.
 */
async function healthWhile(until: Promise<unknown>): Promise<number[] & { during: number }> {
  let done = false;
  void until.finally(() => (done = true));
  const latencies = Object.assign([] as number[], { during: 0 });
  while (!done || latencies.length < 20) {
    const started = performance.now();
    const response = await fetch(`${base}/health`);
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    latencies.push(performance.now() - started);
    if (!done) latencies.during++;
  }
  return latencies;
}

function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))];
}

const hog = (where: string) => `version: "1.0"
tasks:
  - name: hog
${where}    exec:
      script: |
        local s = string.rep("x", 1024 * 1024 * 1024)
        return true, "built " .. #s
`;
const quick = `version: "1.0"
tasks:
  - name: quick
    exec: { script: 'return true, "fine"' }
`;

describe.each([
  ['on the master', ''],
  ['on an agent', '    delegate_to: web-1\n'],
])('a 1 GiB string.rep %s', (_where, delegation) => {
  it('fails its task with the memory-limit message while /health answers and another run succeeds', async () => {
    const hogId = await start(hog(delegation), 'hog');
    const quickId = await start(quick, 'quick');
    const runs = Promise.all([finish(hogId), finish(quickId)]);
    const latencies = await healthWhile(runs);
    const [hogRun, quickRun] = await runs;
    expect(hogRun.status).toBe('failed');
    expect(hogRun.tasks[0].message).toMatch(
      /memory limit of 512 MiB exceeded \(string\.rep would build a string of 1\.0 GiB\)/,
    );
    expect(quickRun.status).toBe('succeeded');
    // Refused before allocating: appended piece by piece it held the loop 19 s. Not a latency
    // target (test/bench/lua-limits.mjs measures that), only proof the loop was not held.
    expect(p99(latencies)).toBeLessThan(5_000);
  });
});

// The workflow's own limit (64 MiB), not the 512 MiB default (which the string.rep runs above show
// on the master and the agent): the check of `..` is the same, and the run copies 128 MiB before
// it stops instead of 1 GiB, seconds of two shared cores.
const doubling = (where: string) => `version: "1.0"
memory_limit: 64MiB
tasks:
  - name: double
${where}    exec: { script: 'local s = "x" while true do s = s .. s end' }
`;

describe.each([
  ['on the master', ''],
  ['on an agent', '    delegate_to: web-1\n'],
])('a doubling s = s .. s %s', (_where, delegation) => {
  it("fails its task when '..' would pass the memory limit while /health answers and another run succeeds", async () => {
    const doubleId = await start(doubling(delegation), 'double');
    const quickId = await start(quick, 'quick');
    const runs = Promise.all([finish(doubleId), finish(quickId)]);
    const latencies = await healthWhile(runs);
    const [doubleRun, quickRun] = await runs;
    expect(doubleRun.status).toBe('failed');
    // Refused before allocating (fengari-patch.mjs), where it grew outside the heap to gigabytes.
    expect(doubleRun.tasks[0].message).toMatch(
      /double:1: memory limit of 64 MiB exceeded \('\.\.' would build a string of 128 MiB\)/,
    );
    expect(quickRun.status).toBe('succeeded');
    expect(latencies.length).toBeGreaterThanOrEqual(20);
  }, 60_000);
});

describe('the master', () => {
  it('logs the failure in runner.log and keeps serving after a script is stopped by its timeout', async () => {
    const spinId = await start(
      `version: "1.0"\ntasks:\n  - name: spin\n    timeout: 1s\n    exec: { script: 'while true do end' }\n`,
      'spin',
    );
    const spin = finish(spinId);
    const latencies = await healthWhile(spin);
    // The script runs in the master's local executor (a process of its own): its worker stops it
    // at the line, or, when that worker got no CPU in time (a loaded machine), the executor ends
    // the worker 250 ms later. Either way the master only waits.
    expect((await spin).tasks[0].message).toMatch(/^timed out after 1000 ms \((at spin:1|inside a library call)\)/);
    expect(latencies.during).toBeGreaterThanOrEqual(2);
    const log = readFileSync(join(masterDir, 'logs/runner.log'), 'utf8');
    expect(log).toMatch(/failed: .*memory limit of 512 MiB exceeded/);
    expect(log).toMatch(/failed: timed out after 1000 ms/);
  });
});

const grow = (where: string, limit: string) => `version: "1.0"
${limit}tasks:
  - name: grow
${where}    exec: { script: 'local t = {} for i = 1, 1e8 do t[i] = i end' }
`;
const backtrack = (where: string) => `version: "1.0"
tasks:
  - name: find
    timeout: 1s
${where}    exec: { script: 'return string.find(string.rep("a", 40), string.rep("a*", 20) .. "b")' }
`;

// auto runs these scripts in worker threads (a loop; a string.find call): the script's worker has
// the memory limit as its heap limit and is ended when stuck in one library call past its timeout.
describe.each([
  // The workflow's memory_limit key holds on the master and travels to the agent with the task
  // (TaskRequest.memory_limit_mib). 64 MiB: the table reaches it in half the time 128 MiB took.
  // Without the key the agent's worker has the runtime's default (512 MiB): the 1 GiB string.rep on
  // an agent above shows it, without the ~15 s of CPU a table grown to 512 MiB costs.
  ['on the master', '', 'memory_limit: 64MiB\n', '64 MiB'],
  ["on an agent with the workflow's memory_limit", '    delegate_to: web-1\n', 'memory_limit: 64MiB\n', '64 MiB'],
])('in a Lua worker %s', (_where, delegation, limit, shown) => {
  it('the 1e8-entry table fails its task at the memory limit while /health answers and another run succeeds', async () => {
    const tableId = await start(grow(delegation, limit), 'grow');
    const quickId = await start(quick, 'quick');
    const runs = Promise.all([finish(tableId), finish(quickId)]);
    const latencies = await healthWhile(runs);
    const [tableRun, quickRun] = await runs;
    expect(tableRun.status).toBe('failed');
    expect(tableRun.tasks[0].message).toMatch(new RegExp(`memory limit of ${shown} exceeded`));
    // The agent's own log says it stopped the script, so the limit was applied there.
    if (delegation) {
      await waitForOutput(
        children[1],
        new RegExp(`task grow of grow \\(run ${tableId}\\) failed: memory limit of ${shown} exceeded`),
      );
    }
    expect(quickRun.status).toBe('succeeded');
    expect(latencies.during).toBeGreaterThanOrEqual(3);
  }, 120_000);
});

describe.each([
  ['on the master', ''],
  ['on an agent', '    delegate_to: web-1\n'],
])('in a Lua worker %s', (_where, delegation) => {
  it('a backtracking string.find is ended at its timeout while /health answers and another run succeeds', async () => {
    const findId = await start(backtrack(delegation), 'find');
    const quickId = await start(quick, 'quick');
    const runs = Promise.all([finish(findId), finish(quickId)]);
    const latencies = await healthWhile(runs);
    const [findRun, quickRun] = await runs;
    expect(findRun.status).toBe('failed');
    expect(findRun.tasks[0].message).toMatch(/^timed out after 1000 ms/);
    expect(quickRun.status).toBe('succeeded');
    expect(latencies.during).toBeGreaterThanOrEqual(2);
  }, 60_000);
});

describe('a table grown without bound (the 1e8-entry script), inline', () => {
  it('fails its task with not enough memory on a master with a small heap, which goes on serving', async () => {
    const dataDir = tempDataDir('runner-e2e-lua-heap-');
    // lua.isolation: inline runs scripts on the master's own thread, where the heap guard is the defence.
    const small = spawnRunner(['server', '--http-port', '0', '--bind-address', '127.0.0.1', '--port', '0'], {
      // engine.run_as: self keeps the script in the master's own process (the executor, the
      // default, would take it off the master altogether): the heap guard there is what is tested.
      // The guard at 40% of the heap (the default is 70%): the table reaches it in half the time,
      // well above what the master itself holds.
      env: {
        RUNNER_DATA_DIR: dataDir,
        NODE_OPTIONS: '--max-old-space-size=384',
        RUNNER_LUA_HEAP_GUARD_RATIO: '0.4',
        RUNNER_LUA_ISOLATION: 'inline',
        RUNNER_ENGINE_RUN_AS: 'self',
      },
    });
    children.push(small);
    const [, http] = await waitForOutput(small, /REST API listening on (127\.0\.0\.1:\d+)/);
    const saved = { base, call };
    base = `http://${http}/api/v1`;
    call = fetchAs(dataDir);
    try {
      const tableId = await start(
        `version: "1.0"\ntasks:\n  - name: grow\n    exec: { script: 'local t = {} for i = 1, 1e8 do t[i] = i end' }\n`,
        'grow',
      );
      const quickId = await start(quick, 'quick');
      const runs = Promise.all([finish(tableId), finish(quickId)]);
      await healthWhile(runs);
      const [tableRun, quickRun] = await runs;
      expect(tableRun.tasks[0].message).toMatch(
        /not enough memory: the runner's heap holds [\d.]+ MiB of its [\d.]+ MiB limit; the script was stopped to keep the runner up/,
      );
      expect(quickRun.status).toBe('succeeded');
      expect((await fetch(`${base}/health`)).status).toBe(200);
      expect(small.exitCode).toBeNull();
    } finally {
      ({ base, call } = saved);
    }
  }, 120_000);
});
