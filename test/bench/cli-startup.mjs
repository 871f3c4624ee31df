// CLI start-up: wall time of `runner --help` and `runner modules list` as a user runs them
// (a fresh node process each time, through the built bin). Target: --help under 300 ms.
// Run: npm run build && node test/bench/cli-startup.mjs [runs]
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const bin = resolve(import.meta.dirname, '../../kernel/bin/runner.js');
const runs = Number(process.argv[2] ?? 20);
const env = { ...process.env, RUNNER_DATA_DIR: mkdtempSync(join(tmpdir(), 'runner-bench-cli-')) };

function measure(args) {
  const times = [];
  for (let i = 0; i < runs + 2; i++) {
    const started = process.hrtime.bigint();
    const result = spawnSync(process.execPath, [bin, ...args], { env, encoding: 'utf8' });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (result.status !== 0) throw new Error(`runner ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
    if (i >= 2) times.push(ms); // the first two warm the file-system cache
  }
  times.sort((a, b) => a - b);
  const pick = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
  return {
    command: `runner ${args.join(' ')}`,
    runs,
    min_ms: +times[0].toFixed(1),
    p50_ms: +pick(0.5).toFixed(1),
    p95_ms: +pick(0.95).toFixed(1),
  };
}

const baseline = (() => {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const started = process.hrtime.bigint();
    spawnSync(process.execPath, ['-e', '0']);
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  times.sort((a, b) => a - b);
  return +times[Math.floor(runs / 2)].toFixed(1);
})();

const results = [measure(['--help']), measure(['modules', 'list'])];
console.log(`node -e 0 (process start alone): p50 ${baseline} ms`);
for (const r of results)
  console.log(`${r.command.padEnd(22)} min ${r.min_ms} ms  p50 ${r.p50_ms} ms  p95 ${r.p95_ms} ms  (${r.runs} runs)`);
const help = results[0];
console.log(`target runner --help < 300 ms: ${help.p95_ms < 300 ? 'met' : 'MISSED'} (p95 ${help.p95_ms} ms)`);
console.log(JSON.stringify({ bench: 'cli-startup', node_baseline_p50_ms: baseline, results }));
