// Engine overhead per task: a workflow of 1,000 trivial tasks (`return true`, parallel 1) against
// one of a single task, so that per-task overhead = (T(1000) - T(1)) / 999. Measured twice:
//
//  - as a user runs it: `runner run --file` in a fresh process with an empty temp data directory
//    (wall time of the whole command; the engine's own run duration comes from `--output json`);
//  - in-process: the embedded kernel booted once, `engine.start({ source: { file } }).done` timed,
//    which leaves process start-up, plugin loading and the store's opening out.
//
// Target: under 2 ms per task. Runs against the built code: `node build.mjs` first.
//
//   node test/bench/engine-1000-tasks.mjs [--tasks 1000] [--runs 1]
//
// --runs is how many times each large workflow runs (the median counts); the 1-task workflow runs
// 3 times as a process and 5 times in-process. Prints readable lines, then one JSON line.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'kernel/bin/runner.js');
const TARGET_MS_PER_TASK = 2;

const { values } = parseArgs({
  options: { tasks: { type: 'string', default: '1000' }, runs: { type: 'string', default: '1' } },
});
const taskCount = Number(values.tasks);
const runs = Number(values.runs);
if (!Number.isInteger(taskCount) || taskCount < 2 || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: engine-1000-tasks.mjs [--tasks N>=2] [--runs N>=1]');
  process.exit(2);
}

const [kernelApi, sdk] = await Promise.all([
  import(join(root, 'kernel/dist/index.js')),
  import(join(root, 'plugin-sdk/dist/index.js')),
]).catch((error) => {
  console.error(`cannot load the built kernel: run \`node build.mjs\` first (${error.message})`);
  process.exit(1);
});

const work = mkdtempSync(join(tmpdir(), 'runner-bench-engine-'));
function workflowFile(n) {
  let text = `version: "1.0"\ndescription: ${n} trivial tasks\nparallel: 1\ntasks:\n`;
  for (let i = 1; i <= n; i++) text += `  - name: t${i}\n    exec:\n      script: return true\n`;
  const file = join(work, `tasks-${n}.yaml`);
  writeFileSync(file, text);
  return file;
}
const files = { 1: workflowFile(1), [taskCount]: workflowFile(taskCount) };

// CPU time of waited-for children (utime + stime of /proc/self/stat's cutime and cstime), in ms:
// unlike wall time, barely moved by other work on the machine. Undefined where /proc is missing.
function childrenCpuMs() {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8')
      .replace(/^.*\) /s, '')
      .split(' ');
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}
const CLOCK_TICKS = 100; // sysconf(_SC_CLK_TCK) on Linux

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const round = (x, digits = 1) => +x.toFixed(digits);

/** One `runner run --file` in a fresh process and a fresh, empty data directory. */
function runProcess(n) {
  const dataDir = mkdtempSync(join(tmpdir(), 'runner-bench-engine-data-'));
  try {
    const cpuBefore = childrenCpuMs();
    const started = performance.now();
    const result = spawnSync(process.execPath, [bin, 'run', `tasks-${n}`, '--file', files[n], '--output', 'json'], {
      env: { ...process.env, RUNNER_DATA_DIR: dataDir },
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
    const wall = performance.now() - started;
    const cpu = cpuBefore === undefined ? undefined : childrenCpuMs() - cpuBefore;
    const summary = result.stdout
      .trim()
      .split('\n')
      .map((line) => {
        try {
          return JSON.parse(line);
        } catch {
          return {};
        }
      })
      .find((o) => o.type === 'summary');
    if (result.status !== 0 || summary?.status !== 'succeeded' || summary.counts?.succeeded !== n) {
      throw new Error(
        `runner run (${n} tasks) exited ${result.status}: ${result.stderr.trim() || result.stdout.slice(-500)}`,
      );
    }
    return { wall_ms: wall, cpu_ms: cpu, run_ms: summary.duration * 1000 };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

console.log(
  `engine overhead: ${taskCount} trivial tasks vs 1, parallel 1 (${cpus().length} cores, load average ${loadavg()[0].toFixed(2)}: ` +
    'other work on the machine skews every figure)',
);

// --- As a process -------------------------------------------------------------------------------
runProcess(1); // warms the file-system cache; not counted
const small = Array.from({ length: 3 }, () => runProcess(1));
const large = Array.from({ length: runs }, () => runProcess(taskCount));
const medianOf = (rs, key) => (rs.some((r) => r[key] === undefined) ? undefined : median(rs.map((r) => r[key])));
const cli = {
  one_task_wall_ms: round(median(small.map((r) => r.wall_ms))),
  one_task_cpu_ms: medianOf(small, 'cpu_ms'),
  one_task_run_ms: round(median(small.map((r) => r.run_ms))),
  many_tasks_wall_ms: round(median(large.map((r) => r.wall_ms))),
  many_tasks_cpu_ms: medianOf(large, 'cpu_ms'),
  many_tasks_run_ms: round(median(large.map((r) => r.run_ms))),
};
cli.per_task_ms = round((cli.many_tasks_wall_ms - cli.one_task_wall_ms) / (taskCount - 1), 3);
cli.per_task_cpu_ms =
  cli.one_task_cpu_ms === undefined
    ? undefined
    : round((cli.many_tasks_cpu_ms - cli.one_task_cpu_ms) / (taskCount - 1), 3);
cli.startup_ms = round(cli.one_task_wall_ms - cli.one_task_run_ms);
const cpuNote = (ms) => (ms === undefined ? '' : `, ${ms} ms CPU`);
console.log(
  `process:    1 task ${cli.one_task_wall_ms} ms wall${cpuNote(cli.one_task_cpu_ms)} (the run itself ${cli.one_task_run_ms} ms: ~${cli.startup_ms} ms is start-up and shut-down); ` +
    `${taskCount} tasks ${cli.many_tasks_wall_ms} ms wall${cpuNote(cli.many_tasks_cpu_ms)} (the run itself ${cli.many_tasks_run_ms} ms)`,
);
console.log(
  `process:    per-task overhead (T${taskCount} - T1) / ${taskCount - 1} = ${cli.per_task_ms} ms wall` +
    (cli.per_task_cpu_ms === undefined ? '' : ` (${cli.per_task_cpu_ms} ms CPU)`),
);

// --- In-process ---------------------------------------------------------------------------------
const dataDir = mkdtempSync(join(tmpdir(), 'runner-bench-engine-data-'));
const plugins = await kernelApi.discoverPlugins({ builtinDir: kernelApi.builtinPluginsDir });
// RUNNER_LUA_ISOLATION, when set, holds here too (as it does for the process runs): modes compare.
const isolation = process.env.RUNNER_LUA_ISOLATION;
const config = await kernelApi.loadConfig(
  { dataDir, env: isolation === undefined ? {} : { RUNNER_LUA_ISOLATION: isolation } },
  plugins,
);
const logger = await kernelApi.createLogger({ dataDir, level: 'info' }); // the file log, as `runner run` writes it
const bootStarted = performance.now();
const kernel = await kernelApi.bootKernel({
  profile: 'embedded',
  plugins,
  config,
  logger,
  kernelVersion: kernelApi.kernelVersion,
});
const bootMs = performance.now() - bootStarted;
const engine = kernel.get(sdk.WorkflowEngineRef);
const runtime = kernel.get(sdk.LuaRuntimeRef);

async function runInProcess(n) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const { done } = await engine.start({ source: { file: files[n] }, workflowName: `tasks-${n}` });
  const record = await done;
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  if (record.status !== 'succeeded' || record.counts.succeeded !== n)
    throw new Error(`in-process run of ${n} tasks ended ${record.status}: ${record.error ?? ''}`);
  return { ms, cpuMs: (used.user + used.system) / 1000, record };
}

for (let i = 0; i < 2; i++) await runInProcess(1); // JIT and the Lua state pool
const inSmall = [];
for (let i = 0; i < 5; i++) inSmall.push(await runInProcess(1));
const inLarge = [];
for (let i = 0; i < runs; i++) inLarge.push(await runInProcess(taskCount));
const largeRun = inLarge.sort((a, b) => a.ms - b.ms)[Math.floor((inLarge.length - 1) / 2)];
const inproc = {
  boot_ms: round(bootMs),
  one_task_ms: round(median(inSmall.map((r) => r.ms)), 2),
  one_task_cpu_ms: round(median(inSmall.map((r) => r.cpuMs)), 2),
  many_tasks_ms: round(largeRun.ms),
  many_tasks_cpu_ms: round(largeRun.cpuMs),
};
inproc.per_task_ms = round((inproc.many_tasks_ms - inproc.one_task_ms) / (taskCount - 1), 3);
inproc.per_task_cpu_ms = round((inproc.many_tasks_cpu_ms - inproc.one_task_cpu_ms) / (taskCount - 1), 3);

// Where the per-task time goes: a task's own duration as the engine records it, early and late in
// the run (a cost that grows with the number of tasks before it shows here), and what is left
// between tasks (scheduling, recording, events).
const durations = largeRun.record.tasks.map((t) => t.duration * 1000);
const slice = Math.max(1, Math.floor(taskCount / 10));
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const breakdown = {
  task_duration_first_ms: round(mean(durations.slice(0, slice)), 3),
  task_duration_last_ms: round(mean(durations.slice(-slice)), 3),
  task_duration_mean_ms: round(mean(durations), 3),
  between_tasks_mean_ms: round((largeRun.ms - durations.reduce((a, b) => a + b, 0)) / taskCount, 3),
};
// The floor under every task: one `return true` through the Lua runtime, with no globals.
for (let i = 0; i < 20; i++) await runtime.run('return true', { chunkName: '=bench', logger });
const floorRuns = 200;
const floorStarted = performance.now();
for (let i = 0; i < floorRuns; i++) await runtime.run('return true', { chunkName: '=bench', logger });
breakdown.lua_run_alone_ms = round((performance.now() - floorStarted) / floorRuns, 3);

await kernel.stop('benchmark finished');
await logger.flush();
rmSync(dataDir, { recursive: true, force: true });
rmSync(work, { recursive: true, force: true });

console.log(
  `in-process: kernel boot ${inproc.boot_ms} ms; 1 task ${inproc.one_task_ms} ms (${inproc.one_task_cpu_ms} ms CPU); ` +
    `${taskCount} tasks ${inproc.many_tasks_ms} ms (${inproc.many_tasks_cpu_ms} ms CPU)`,
);
console.log(
  `in-process: per-task overhead (T${taskCount} - T1) / ${taskCount - 1} = ${inproc.per_task_ms} ms wall (${inproc.per_task_cpu_ms} ms CPU)`,
);
console.log(
  `where it goes: a task's recorded duration ${breakdown.task_duration_first_ms} ms (first ${slice}) -> ` +
    `${breakdown.task_duration_last_ms} ms (last ${slice}), mean ${breakdown.task_duration_mean_ms} ms; ` +
    `${breakdown.between_tasks_mean_ms} ms per task outside the tasks; ` +
    `runtime.run('return true') alone ${breakdown.lua_run_alone_ms} ms`,
);
const targets = {
  process_per_task_under_2_ms: cli.per_task_ms < TARGET_MS_PER_TASK,
  in_process_per_task_under_2_ms: inproc.per_task_ms < TARGET_MS_PER_TASK,
};
console.log(
  `target < ${TARGET_MS_PER_TASK} ms/task: process ${targets.process_per_task_under_2_ms ? 'met' : 'MISSED'} (${cli.per_task_ms} ms), ` +
    `in-process ${targets.in_process_per_task_under_2_ms ? 'met' : 'MISSED'} (${inproc.per_task_ms} ms)`,
);
console.log(
  JSON.stringify({
    bench: 'engine-1000-tasks',
    tasks: taskCount,
    runs,
    machine: { cpus: cpus().length, node: process.version, loadavg_at_end: loadavg()[0] },
    process: cli,
    in_process: inproc,
    breakdown,
    target_ms_per_task: TARGET_MS_PER_TASK,
    targets,
  }),
);
process.exit(0);
