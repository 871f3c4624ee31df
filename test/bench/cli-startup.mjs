// CLI start-up: wall time of `runner --version`, `runner --help`, `runner modules list` and a
// one-task `runner run` (one exec.run of /bin/true, embedded, in a data directory that already
// holds a store), as a user runs them: a fresh node process each time, through the built bin.
// Targets: --version p50 under 100 ms, --help p95 under 300 ms, the one-task run p50 under 250 ms.
// Also the CPU time (user + system) of each command when GNU time is at /usr/bin/time: on a shared
// machine whose load stretches wall times, it is the figure that compares builds.
// Run: npm run build && node test/bench/cli-startup.mjs [runs]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const bin = resolve(import.meta.dirname, '../../kernel/bin/runner.js');
const runs = Number(process.argv[2] ?? 20);
const env = { ...process.env, RUNNER_DATA_DIR: mkdtempSync(join(tmpdir(), 'runner-bench-cli-')) };

const TIME = '/usr/bin/time';
const withCpu = existsSync(TIME);

function measure(args) {
  const times = [];
  const cpu = [];
  for (let i = 0; i < runs + 2; i++) {
    const started = process.hrtime.bigint();
    const result = withCpu
      ? spawnSync(TIME, ['-f', 'cpu %U %S', process.execPath, bin, ...args], { env, encoding: 'utf8' })
      : spawnSync(process.execPath, [bin, ...args], { env, encoding: 'utf8' });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (result.status !== 0) throw new Error(`runner ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
    if (i < 2) continue; // the first two warm the file-system cache
    times.push(ms);
    const used = /^cpu ([\d.]+) ([\d.]+)$/m.exec(result.stderr);
    if (used) cpu.push((Number(used[1]) + Number(used[2])) * 1000);
  }
  const pick = (values, q) => {
    const sorted = [...values].sort((a, b) => a - b);
    return +sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(1);
  };
  return {
    command: `runner ${args.join(' ')}`,
    runs,
    min_ms: pick(times, 0),
    p50_ms: pick(times, 0.5),
    p95_ms: pick(times, 0.95),
    ...(cpu.length > 0 ? { cpu_min_ms: pick(cpu, 0), cpu_p50_ms: pick(cpu, 0.5) } : {}),
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

const workflow = join(env.RUNNER_DATA_DIR, 'one.yaml');
writeFileSync(
  workflow,
  'version: "1.0"\ntasks:\n  - name: one\n    exec:\n      script: |\n        local r = exec.run("/bin/true")\n        return r.success\n',
);
const [version, help, list, run] = [
  measure(['--version']),
  measure(['--help']),
  measure(['modules', 'list']),
  measure(['run', 'one', '--file', workflow]),
];
const results = [version, help, list, run];
console.log(`node -e 0 (process start alone): p50 ${baseline} ms; load average ${loadavg()[0].toFixed(2)}`);
for (const r of results)
  console.log(
    `${r.command.slice(0, 30).padEnd(30)} min ${r.min_ms} ms  p50 ${r.p50_ms} ms  p95 ${r.p95_ms} ms${r.cpu_p50_ms === undefined ? '' : `  CPU min ${r.cpu_min_ms} ms p50 ${r.cpu_p50_ms} ms`}  (${r.runs} runs)`,
  );
const verdict = (ok) => (ok ? 'met' : 'MISSED');
console.log(`target runner --version p50 < 100 ms: ${verdict(version.p50_ms < 100)} (p50 ${version.p50_ms} ms)`);
console.log(`target runner --help p95 < 300 ms: ${verdict(help.p95_ms < 300)} (p95 ${help.p95_ms} ms)`);
console.log(`target one-task runner run p50 < 250 ms: ${verdict(run.p50_ms < 250)} (p50 ${run.p50_ms} ms)`);
console.log(
  JSON.stringify({ bench: 'cli-startup', node_baseline_p50_ms: baseline, load_average: loadavg()[0], results }),
);
