// Lua speed: the same recursive fib(27) in runner's Lua runtime (Lua 5.3 on fengari, in
// JavaScript) and in Debian's lua5.4 (C). Timed inside Lua with os.clock (CPU time) and outside
// (wall time: around `runtime.run` in-process, around the whole `lua5.4` process, and the task's
// recorded duration in `runner run --output json`). 3 runs each, median. No target: the ratio is
// what a user should expect from CPU-bound Lua in a task.
//
//   apt-get install -y lua5.4 && node build.mjs && node test/bench/lua-fib.mjs [--n 27] [--runs 3]
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
const { values } = parseArgs({
  options: { n: { type: 'string', default: '27' }, runs: { type: 'string', default: '3' } },
});
const n = Number(values.n);
const runs = Number(values.runs);

const [kernelApi, sdk] = await Promise.all([
  import(join(root, 'kernel/dist/index.js')),
  import(join(root, 'plugin-sdk/dist/index.js')),
]).catch((error) => {
  console.error(`cannot load the built kernel: run \`node build.mjs\` first (${error.message})`);
  process.exit(1);
});

const FIB = `local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end
local t0 = os.clock()
local result = fib(${n})
local cpu = os.clock() - t0`;

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
const work = mkdtempSync(join(tmpdir(), 'runner-bench-fib-'));

// --- Debian's lua5.4 ----------------------------------------------------------------------------
const luaFile = join(work, 'fib.lua');
writeFileSync(luaFile, `${FIB}\nprint(result, string.format("%.6f", cpu))\n`);
let native;
const probe = spawnSync('lua5.4', ['-v'], { encoding: 'utf8' });
if (probe.error || probe.status !== 0) {
  console.error(
    `lua-fib: lua5.4 cannot run (${probe.error?.message ?? probe.stderr}); install it: apt-get install -y lua5.4 (runner alone is measured)`,
  );
} else {
  const measures = [];
  for (let i = 0; i < runs + 1; i++) {
    const started = performance.now();
    const out = spawnSync('lua5.4', [luaFile], { encoding: 'utf8' });
    const wall = performance.now() - started;
    const [result, cpu] = out.stdout.trim().split(/\s+/).map(Number);
    if (out.status !== 0 || !Number.isFinite(cpu)) throw new Error(`lua5.4 failed: ${out.stderr}`);
    if (i > 0) measures.push({ result, cpu_ms: cpu * 1000, wall_ms: wall }); // the first warms the cache
  }
  native = {
    version: (probe.stdout || probe.stderr).trim(),
    result: measures[0].result,
    os_clock_ms: +median(measures.map((m) => m.cpu_ms)).toFixed(1),
    process_wall_ms: +median(measures.map((m) => m.wall_ms)).toFixed(1),
  };
}

// --- runner, in-process: the LuaRuntime service ---------------------------------------------------
const dataDir = mkdtempSync(join(tmpdir(), 'runner-bench-fib-data-'));
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
const runtime = kernel.get(sdk.LuaRuntimeRef);
const source = `${FIB}\nreturn result, cpu`;
const inproc = [];
for (let i = 0; i < runs + 1; i++) {
  const started = performance.now();
  const { values: out } = await runtime.run(source, { chunkName: '=fib', logger });
  const wall = performance.now() - started;
  if (i > 0) inproc.push({ result: out[0], cpu_ms: out[1] * 1000, wall_ms: wall }); // the first warms the JIT
}
await kernel.stop('benchmark finished');
await logger.flush();
rmSync(dataDir, { recursive: true, force: true });
const runner = {
  result: inproc[0].result,
  os_clock_ms: +median(inproc.map((m) => m.cpu_ms)).toFixed(1),
  run_wall_ms: +median(inproc.map((m) => m.wall_ms)).toFixed(1),
};

// --- runner, as a task of `runner run` --------------------------------------------------------------
const workflow = join(work, 'fib.yaml');
writeFileSync(
  workflow,
  `version: "1.0"\ntasks:\n  - name: fib\n    exec:\n      script: |\n${`${FIB}\nreturn true, "fib", { result = result, cpu = cpu }`
    .split('\n')
    .map((line) => `        ${line}`)
    .join('\n')}\n`,
);
const taskRuns = [];
for (let i = 0; i < runs; i++) {
  const taskData = mkdtempSync(join(tmpdir(), 'runner-bench-fib-data-'));
  const out = spawnSync(process.execPath, [bin, 'run', 'fib', '--file', workflow, '--output', 'json'], {
    env: { ...process.env, RUNNER_DATA_DIR: taskData },
    encoding: 'utf8',
  });
  rmSync(taskData, { recursive: true, force: true });
  const task = jsonLines(out.stdout).find((o) => o.type === 'task' && o.status === 'succeeded');
  if (out.status !== 0 || !task) throw new Error(`runner run fib failed (exit ${out.status}): ${out.stderr}`);
  taskRuns.push({ duration_ms: task.duration * 1000, cpu_ms: (task.outputs?.cpu ?? Number.NaN) * 1000 });
}
runner.task_duration_ms = +median(taskRuns.map((t) => t.duration_ms)).toFixed(1);
runner.task_os_clock_ms = +median(taskRuns.map((t) => t.cpu_ms)).toFixed(1);
rmSync(work, { recursive: true, force: true });

console.log(
  `fib(${n}), recursive, ${runs} runs each, median (${cpus().length} cores, load average ${loadavg()[0].toFixed(2)})`,
);
if (native) {
  console.log(
    `${native.version}: os.clock ${native.os_clock_ms} ms; whole process ${native.process_wall_ms} ms (result ${native.result})`,
  );
}
console.log(
  `runner (fengari, in-process runtime.run): os.clock ${runner.os_clock_ms} ms; wall around run ${runner.run_wall_ms} ms (result ${runner.result})`,
);
console.log(
  `runner run (a task, fresh process): task duration ${runner.task_duration_ms} ms; os.clock in the task ${runner.task_os_clock_ms} ms`,
);
const ratio = native
  ? {
      os_clock: +(runner.os_clock_ms / native.os_clock_ms).toFixed(1),
      wall: +(runner.run_wall_ms / native.os_clock_ms).toFixed(1),
    }
  : undefined;
if (ratio)
  console.log(
    `ratio runner / lua5.4: ${ratio.os_clock}x by os.clock, ${ratio.wall}x by runner's wall time against lua5.4's os.clock`,
  );
if (native && native.result !== runner.result)
  console.log(`WARNING: results differ (${native.result} vs ${runner.result})`);
console.log(
  JSON.stringify({
    bench: 'lua-fib',
    n,
    runs,
    machine: { cpus: cpus().length, node: process.version, loadavg_at_end: loadavg()[0] },
    lua54: native ?? null,
    runner,
    ratio: ratio ?? null,
  }),
);
process.exit(native ? 0 : 1);
