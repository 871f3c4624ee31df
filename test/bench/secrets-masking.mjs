// What masking a stack run's secrets costs: a run printing 100,000 log lines on a stack holding
// 20 secrets (each registered with the redactor with its JSON, URL and base64 forms while the run
// lives) against the same run on a stack holding none. Target: under 10% more. Runs alternate
// between the two stacks; the figures are the medians of the master's CPU time and of the wall
// time of each run (the CPU time holds better on a busy machine).
// Run: npm run build && nice node test/bench/secrets-masking.mjs [--lines 100000] [--rounds 3]
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { percentile, round, startMaster } from './support/master.mjs';

const { values: flags } = parseArgs({
  options: { lines: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '3' } },
});
const lines = Number(flags.lines);
const rounds = Number(flags.rounds);

// Each line is ordinary text: what most of a run's output is. Lines are logged a hundred at a
// time (one call, one entry of 100 lines): 100,000 module calls one by one outran the executor's
// answer to a module call on this busy machine, which is not what is measured here.
const workflow = `version: "1.0"
tasks:
  - name: print
    exec:
      script: |
        for i = 1, ${lines / 100} do
          local batch = {}
          for j = 1, 100 do
            batch[j] = "line " .. ((i - 1) * 100 + j) .. " of the deploy: copying files to the release directory, all fine"
          end
          log.info(table.concat(batch, "\\n"))
        end
        return true, "printed ${lines} lines"
`;

const master = await startMaster({
  env: {
    // Every line kept in the record and mirrored to runner.log: every line passes the redactor.
    RUNNER_ENGINE_TASK_LOG_BYTES: String(256 * 1024 * 1024),
    RUNNER_ENGINE_RUN_LOG_BYTES: String(256 * 1024 * 1024),
  },
});
const ok = (answer, what) => {
  if (answer.status >= 300) throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
};
try {
  ok(await master.request('POST', '/api/v1/stacks', { name: 'none', environment: 'staging' }), 'stack none');
  ok(await master.request('POST', '/api/v1/stacks', { name: 'twenty', environment: 'staging' }), 'stack twenty');
  for (let i = 0; i < 20; i++)
    ok(
      await master.request('PUT', `/api/v1/secrets/twenty/s${i}`, {
        value: `secret-${i}-${randomBytes(12).toString('hex')}`,
      }),
      'secret',
    );

  const runOn = async (stack) => {
    const cpu0 = master.cpuMs();
    const t0 = performance.now();
    const { id } = ok(
      await master.request('POST', '/api/v1/workflows/run', { content: workflow, workflow_name: 'print', stack }),
      'run',
    );
    for (;;) {
      const run = ok(await master.request('GET', `/api/v1/executions/${id}?log=false`), 'get');
      if (run.status !== 'running') {
        if (run.status !== 'succeeded')
          throw new Error(`run on ${stack} ${run.status}: ${run.error ?? ''} ${run.tasks?.[0]?.message ?? ''}`);
        break;
      }
      await sleep(100);
    }
    return { wallMs: performance.now() - t0, cpuMs: master.cpuMs() - cpu0 };
  };

  await runOn('none'); // warm-up: the executor starts, the code paths compile
  const results = { none: [], twenty: [] };
  for (let r = 0; r < rounds; r++) for (const stack of ['none', 'twenty']) results[stack].push(await runOn(stack));
  const median = (stack, field) =>
    round(
      percentile(
        results[stack].map((x) => x[field]),
        50,
      ),
      0,
    );
  const figures = {
    lines,
    rounds,
    cpu_ms_none: median('none', 'cpuMs'),
    cpu_ms_twenty: median('twenty', 'cpuMs'),
    wall_ms_none: median('none', 'wallMs'),
    wall_ms_twenty: median('twenty', 'wallMs'),
  };
  figures.cpu_overhead_percent = round((100 * (figures.cpu_ms_twenty - figures.cpu_ms_none)) / figures.cpu_ms_none, 1);
  figures.wall_overhead_percent = round(
    (100 * (figures.wall_ms_twenty - figures.wall_ms_none)) / figures.wall_ms_none,
    1,
  );
  console.log(`a run printing ${lines} lines, median of ${rounds}:`);
  console.log(`  no secrets:  master CPU ${figures.cpu_ms_none} ms, wall ${figures.wall_ms_none} ms`);
  console.log(`  20 secrets:  master CPU ${figures.cpu_ms_twenty} ms, wall ${figures.wall_ms_twenty} ms`);
  console.log(
    `  overhead:    CPU ${figures.cpu_overhead_percent}%, wall ${figures.wall_overhead_percent}% (target < 10%)`,
  );
  console.log(JSON.stringify(figures));
} finally {
  await master.stop();
}
