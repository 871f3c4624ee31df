// Measures the parts of the design issue 10 item 2 suggests and that is not built yet: Lua in
// worker threads with resourceLimits (plugins/lua-runtime/README.md, "Memory and long calls").
// fengari runs in a bare worker (no runtime, no modules), so the figures are the floor of that design:
//
//  - rtt: a postMessage round trip carrying a task's globals (100 earlier tasks in `tasks`, 40 env
//    entries) and carrying nothing: what a task would pay to run in a worker, against the engine's
//    per-task CPU overhead of about 0.7-0.8 ms in process (test/bench/engine-1000-tasks.mjs);
//  - table: the 1e8-entry table in a worker capped at --heap-mb: the time until the worker
//    dies with ERR_WORKER_OUT_OF_MEMORY and the main event loop's largest gap meanwhile;
//  - find: a backtracking string.find blocking the worker; how long worker.terminate() takes.
//
//   node test/bench/lua-worker-probe.mjs [--heap-mb 256]
//
// Prints readable lines, then one JSON line.
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';

const root = resolve(import.meta.dirname, '../..');
const { values } = parseArgs({ options: { 'heap-mb': { type: 'string', default: '256' } } });
const heapMb = Number(values['heap-mb']);

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { createRequire } = require('node:module');
const { lua, lauxlib, lualib, to_luastring } = createRequire(workerData.root + '/package.json')('fengari');
parentPort.on('message', (msg) => {
  if (msg.kind === 'echo') return parentPort.postMessage({ id: msg.id });
  const L = lauxlib.luaL_newstate();
  lualib.luaL_openlibs(L);
  parentPort.postMessage({ id: msg.id, status: lauxlib.luaL_dostring(L, to_luastring(msg.script)) });
});`;

function startWorker() {
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { root },
    resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: 16 },
  });
  const pending = new Map();
  let next = 0;
  worker.on('message', (m) => {
    pending.get(m.id)?.resolve(m);
    pending.delete(m.id);
  });
  worker.on('error', (error) => {
    for (const p of pending.values()) p.reject(error);
    pending.clear();
  });
  const call = (msg) =>
    new Promise((resolveCall, reject) => {
      const id = ++next;
      pending.set(id, { resolve: resolveCall, reject });
      worker.postMessage({ ...msg, id });
    });
  return { worker, call };
}

/** The largest gap between 5 ms timer ticks of this (the main) thread while `promise` runs. */
async function mainGap(promise) {
  let max = 0;
  let last = performance.now();
  const tick = setInterval(() => {
    const now = performance.now();
    max = Math.max(max, now - last);
    last = now;
  }, 5);
  try {
    return { result: await promise, maxGapMs: +max.toFixed(1) };
  } finally {
    clearInterval(tick);
  }
}

const results = { machine: { cpus: cpus().length, loadavg_at_start: +loadavg()[0].toFixed(2) }, heap_mb: heapMb };

{
  const { worker, call } = startWorker();
  const globals = {
    vars: { a: 1, b: 'two' },
    task: { name: 't', attempt: 1 },
    workflow: { name: 'w', run_id: 'x' },
    env: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`VAR_${i}`, `value number ${i}`])),
    tasks: Object.fromEntries(
      Array.from({ length: 100 }, (_, i) => [`t${i}`, { status: 'succeeded', message: 'ok', outputs: { x: i } }]),
    ),
  };
  const time = async (payload, n = 2000) => {
    for (let i = 0; i < 200; i++) await call({ kind: 'echo', globals: payload });
    const started = performance.now();
    for (let i = 0; i < n; i++) await call({ kind: 'echo', globals: payload });
    return +(((performance.now() - started) / n) * 1000).toFixed(0);
  };
  results.rtt_us_with_globals = await time(globals);
  results.rtt_us_empty = await time({});
  console.log(
    `round trip: ${results.rtt_us_with_globals} us with a task's globals (100 earlier tasks), ${results.rtt_us_empty} us empty`,
  );
  await worker.terminate();
}

{
  const { worker, call } = startWorker();
  const started = performance.now();
  const { result, maxGapMs } = await mainGap(
    call({ kind: 'run', script: 'local t = {} for i = 1, 1e8 do t[i] = i end' }).then(
      () => 'finished',
      (error) => error.code ?? error.message,
    ),
  );
  results.table = { outcome: result, ms: Math.round(performance.now() - started), main_max_gap_ms: maxGapMs };
  console.log(
    `1e8 table in a worker capped at ${heapMb} MiB: ${result} after ${results.table.ms} ms; main event loop max gap ${maxGapMs} ms`,
  );
  await worker.terminate();
}

{
  const { worker, call } = startWorker();
  void call({ kind: 'run', script: "string.find(string.rep('a', 300), '.-.-.-b')" }).catch(() => {});
  await new Promise((r) => setTimeout(r, 500));
  const started = performance.now();
  await worker.terminate();
  results.terminate_blocked_ms = +(performance.now() - started).toFixed(1);
  console.log(`terminate() of a worker inside a backtracking string.find: ${results.terminate_blocked_ms} ms`);
}
results.machine.loadavg_at_end = +loadavg()[0].toFixed(2);
console.log(JSON.stringify({ bench: 'lua-worker-probe', ...results }));
