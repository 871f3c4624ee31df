// goroutine.parallel overhead: 100 functions that each sleep 100 ms, at most 10 at once, is ten
// waves of 100 ms: 1.0 s at best. Target: within 10% of 1.0 s (0.9 s to 1.1 s).
//
// Timed three ways, 3 runs each, median (os.clock would be CPU time, useless for sleeping code):
//  - the task's duration as the engine records it, in-process (`engine.start(...).done`);
//  - the wall time around `engine.start(...).done` (adds parsing, recording and the run's set-up);
//  - the wall time around `runtime.run(source)` of the LuaRuntime service (the script alone);
// and once as `runner run --output json` in a fresh process (the task's duration).
//
//   node build.mjs && node test/bench/goroutine-parallel.mjs [--runs 3]
//
// Prints readable lines, then one JSON line.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'kernel/bin/runner.js');
const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
const runs = Number(values.runs);
const FUNCTIONS = 100;
const SLEEP_MS = 100;
const MAX_CONCURRENT = 10;
const IDEAL_MS = (FUNCTIONS / MAX_CONCURRENT) * SLEEP_MS;
const TOLERANCE = 0.1;

const [kernelApi, sdk] = await Promise.all([
  import(join(root, 'kernel/dist/index.js')),
  import(join(root, 'plugin-sdk/dist/index.js')),
]).catch((error) => {
  console.error(`cannot load the built kernel: run \`node build.mjs\` first (${error.message})`);
  process.exit(1);
});

const SCRIPT = `local fns = {}
for i = 1, ${FUNCTIONS} do
  fns[i] = function() goroutine.sleep("${SLEEP_MS}ms") return i end
end
local results = goroutine.parallel({ tasks = fns, max_concurrent = ${MAX_CONCURRENT} })
for i = 1, ${FUNCTIONS} do
  if results[i] ~= i then return false, "result " .. i .. " is " .. tostring(results[i]) end
end
return true`;

const work = mkdtempSync(join(tmpdir(), 'runner-bench-goroutine-'));
const workflow = join(work, 'parallel.yaml');
writeFileSync(
  workflow,
  `version: "1.0"\ntasks:\n  - name: parallel\n    exec:\n      script: |\n${SCRIPT.split('\n')
    .map((line) => `        ${line}`)
    .join('\n')}\n`,
);
/** The JSON objects `runner run --output json` printed, one a line; other lines are skipped. */
function jsonLines(text) {
  return text.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line)];
    } catch {
      return [];
    }
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

const dataDir = mkdtempSync(join(tmpdir(), 'runner-bench-goroutine-data-'));
const plugins = await kernelApi.discoverPlugins({ builtinDir: kernelApi.builtinPluginsDir });
const config = await kernelApi.loadConfig({ dataDir, env: {} }, plugins);
const logger = await kernelApi.createLogger({ dataDir, level: 'info' });
const kernel = await kernelApi.bootKernel({
  profile: 'embedded',
  plugins,
  config,
  logger,
  kernelVersion: kernelApi.kernelVersion,
});
const engine = kernel.get(sdk.WorkflowEngineRef);
const runtime = kernel.get(sdk.LuaRuntimeRef);

async function viaEngine() {
  const started = performance.now();
  const { done } = await engine.start({ source: { file: workflow } });
  const record = await done;
  const wall = performance.now() - started;
  const task = record.tasks[0];
  if (record.status !== 'succeeded') throw new Error(`the run ${record.status}: ${task?.message ?? record.error}`);
  return { taskMs: task.duration * 1000, wallMs: wall };
}
async function viaRuntime() {
  const started = performance.now();
  const { values: out } = await runtime.run(SCRIPT, { chunkName: '=parallel', logger });
  if (out[0] !== true) throw new Error(`the script failed: ${out[1]}`);
  return performance.now() - started;
}

await viaEngine(); // warms the JIT; not counted
const engineRuns = [];
const runtimeRuns = [];
for (let i = 0; i < runs; i++) {
  engineRuns.push(await viaEngine());
  runtimeRuns.push(await viaRuntime());
}
await kernel.stop('benchmark finished');
await logger.flush();
rmSync(dataDir, { recursive: true, force: true });

// As a user runs it: the task's duration from `runner run --output json`.
const cliData = mkdtempSync(join(tmpdir(), 'runner-bench-goroutine-data-'));
const cli = spawnSync(process.execPath, [bin, 'run', 'parallel', '--file', workflow, '--output', 'json'], {
  env: { ...process.env, RUNNER_DATA_DIR: cliData },
  encoding: 'utf8',
});
rmSync(cliData, { recursive: true, force: true });
rmSync(work, { recursive: true, force: true });
const cliTask = jsonLines(cli.stdout).find((o) => o.type === 'task' && o.status !== 'running');
if (cli.status !== 0 || cliTask?.status !== 'succeeded')
  throw new Error(`runner run failed (exit ${cli.status}): ${cli.stderr || JSON.stringify(cliTask)}`);

const figures = {
  task_duration_ms: +median(engineRuns.map((r) => r.taskMs)).toFixed(1),
  engine_wall_ms: +median(engineRuns.map((r) => r.wallMs)).toFixed(1),
  runtime_run_ms: +median(runtimeRuns).toFixed(1),
  cli_task_duration_ms: +(cliTask.duration * 1000).toFixed(1),
};
const deviation = (figures.task_duration_ms - IDEAL_MS) / IDEAL_MS;
const met = Math.abs(deviation) <= TOLERANCE;
console.log(
  `goroutine.parallel: ${FUNCTIONS} functions x goroutine.sleep("${SLEEP_MS}ms"), max_concurrent ${MAX_CONCURRENT}; ideal ${IDEAL_MS} ms ` +
    `(${runs} runs, median; ${cpus().length} cores, load average ${loadavg()[0].toFixed(2)})`,
);
console.log(
  `task duration (engine record, in-process): ${figures.task_duration_ms} ms (${engineRuns.map((r) => r.taskMs.toFixed(0)).join(', ')})`,
);
console.log(`around engine.start(...).done:             ${figures.engine_wall_ms} ms`);
console.log(
  `around runtime.run (the script alone):     ${figures.runtime_run_ms} ms (${runtimeRuns.map((x) => x.toFixed(0)).join(', ')})`,
);
console.log(`runner run in a fresh process, the task:   ${figures.cli_task_duration_ms} ms`);
console.log(
  `target within ${TOLERANCE * 100}% of ${IDEAL_MS} ms: ${met ? 'met' : 'MISSED'} (${deviation >= 0 ? '+' : ''}${(deviation * 100).toFixed(1)}%)`,
);
console.log(
  JSON.stringify({
    bench: 'goroutine-parallel',
    functions: FUNCTIONS,
    sleep_ms: SLEEP_MS,
    max_concurrent: MAX_CONCURRENT,
    ideal_ms: IDEAL_MS,
    runs,
    machine: { cpus: cpus().length, node: process.version, loadavg_at_end: loadavg()[0] },
    ...figures,
    deviation: +deviation.toFixed(4),
    target_met: met,
  }),
);
process.exit(0);
