// runner against Ansible on the same job: 100 tasks that each run /bin/true on this machine, one
// after the other. Ansible: Debian's `ansible-playbook`, `connection: local`, `gather_facts: false`,
// 100 `command: /bin/true` tasks on localhost. runner: `runner run --file` with 100 tasks of
// `exec.run("/bin/true")` (parallel 1), in a fresh, empty data directory each time.
// Wall time of the whole command, as a user sees it; one unmeasured warm-up each, then 3 runs
// each, interleaved, median. Target: runner 20x faster.
//
//   apt-get install -y ansible && node build.mjs && node test/bench/vs-ansible.mjs [--tasks 100] [--runs 3]
//
// Exits 1, saying why, when ansible-playbook is not installed. Prints readable lines, then one JSON line.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'kernel/bin/runner.js');
const TARGET_RATIO = 20;

const { values } = parseArgs({
  options: { tasks: { type: 'string', default: '100' }, runs: { type: 'string', default: '3' } },
});
const taskCount = Number(values.tasks);
const runs = Number(values.runs);

const version = spawnSync('ansible-playbook', ['--version'], { encoding: 'utf8' });
if (version.error || version.status !== 0) {
  console.error(
    `vs-ansible: ansible-playbook cannot run (${version.error ? version.error.message : `exit ${version.status}: ${version.stderr.trim()}`}); ` +
      "install Debian's package first: apt-get update && apt-get install -y ansible",
  );
  console.log(JSON.stringify({ bench: 'vs-ansible', error: 'ansible-playbook not available' }));
  process.exit(1);
}
const ansibleVersion = version.stdout.split('\n')[0].trim();

const work = mkdtempSync(join(tmpdir(), 'runner-bench-ansible-'));
const playbook = join(work, 'true.yml');
writeFileSync(
  playbook,
  [
    '- hosts: localhost',
    '  connection: local',
    '  gather_facts: false',
    '  tasks:',
    ...Array.from({ length: taskCount }, (_, i) => `    - name: t${i + 1}\n      command: /bin/true`),
    '',
  ].join('\n'),
);
const workflow = join(work, 'true.yaml');
writeFileSync(
  workflow,
  [
    'version: "1.0"',
    'parallel: 1',
    'tasks:',
    ...Array.from(
      { length: taskCount },
      (_, i) =>
        `  - name: t${i + 1}\n    exec:\n      script: |\n        local r = exec.run("/bin/true")\n        if not r.success then return false, r.stderr end\n        return true`,
    ),
    '',
  ].join('\n'),
);

// Ansible kept to itself: its home, temp files and no retry files in the work directory; the
// interpreter named so that discovery does not add a round trip and a warning.
const ansibleEnv = {
  ...process.env,
  ANSIBLE_HOME: join(work, 'ansible-home'),
  ANSIBLE_LOCAL_TEMP: join(work, 'ansible-tmp'),
  ANSIBLE_RETRY_FILES_ENABLED: 'False',
  ANSIBLE_LOCALHOST_WARNING: 'False',
  ANSIBLE_INVENTORY_UNPARSED_WARNING: 'False',
  ANSIBLE_NOCOLOR: '1',
};

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

function timeCommand(label, command, args, env) {
  const started = performance.now();
  const result = spawnSync(command, args, { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const ms = performance.now() - started;
  if (result.error || result.status !== 0) {
    throw new Error(
      `${label} failed (exit ${result.status}): ${result.error?.message ?? (result.stderr.trim() || result.stdout.slice(-800))}`,
    );
  }
  return { ms, stdout: result.stdout };
}

function runAnsible() {
  const { ms, stdout } = timeCommand(
    'ansible-playbook',
    'ansible-playbook',
    ['-i', 'localhost,', '-e', `ansible_python_interpreter=${'/usr/bin/python3'}`, playbook],
    ansibleEnv,
  );
  const recap = /localhost\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)/.exec(stdout);
  if (!recap || Number(recap[1]) !== taskCount || Number(recap[4]) !== 0)
    throw new Error(`ansible-playbook did not run ${taskCount} tasks: ${stdout.slice(-400)}`);
  return ms;
}

function runRunner() {
  const dataDir = mkdtempSync(join(tmpdir(), 'runner-bench-ansible-data-'));
  try {
    const { ms, stdout } = timeCommand(
      'runner run',
      process.execPath,
      [bin, 'run', 'true', '--file', workflow, '--output', 'json'],
      {
        ...process.env,
        RUNNER_DATA_DIR: dataDir,
      },
    );
    const summary = jsonLines(stdout).find((o) => o.type === 'summary');
    if (summary?.counts?.succeeded !== taskCount)
      throw new Error(`runner run did not succeed on ${taskCount} tasks: ${JSON.stringify(summary)}`);
    return { ms, runMs: summary.duration * 1000 };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

console.log(
  `${taskCount} x /bin/true, one after the other: ${ansibleVersion} vs runner (${cpus().length} cores, load average ` +
    `${loadavg()[0].toFixed(2)}: other work on the machine skews every figure)`,
);
runAnsible();
runRunner();
const ansible = [];
const runner = [];
for (let i = 0; i < runs; i++) {
  ansible.push(runAnsible());
  runner.push(runRunner());
}
rmSync(work, { recursive: true, force: true });

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const ansibleMs = median(ansible);
const runnerMs = median(runner.map((r) => r.ms));
const runnerRunMs = median(runner.map((r) => r.runMs));
const ratio = ansibleMs / runnerMs;
console.log(
  `ansible-playbook: median ${ansibleMs.toFixed(0)} ms (${ansible.map((x) => x.toFixed(0)).join(', ')}); ${(ansibleMs / taskCount).toFixed(1)} ms per task`,
);
console.log(
  `runner run:       median ${runnerMs.toFixed(0)} ms (${runner.map((r) => r.ms.toFixed(0)).join(', ')}); ` +
    `the run itself ${runnerRunMs.toFixed(0)} ms, ${(runnerRunMs / taskCount).toFixed(1)} ms per task`,
);
const met = ratio >= TARGET_RATIO;
console.log(`ratio ansible / runner: ${ratio.toFixed(1)}x; target ${TARGET_RATIO}x: ${met ? 'met' : 'MISSED'}`);
console.log(
  JSON.stringify({
    bench: 'vs-ansible',
    tasks: taskCount,
    runs,
    ansible_version: ansibleVersion,
    machine: { cpus: cpus().length, node: process.version, loadavg_at_end: loadavg()[0] },
    ansible_ms: ansible.map((x) => +x.toFixed(1)),
    runner_ms: runner.map((r) => +r.ms.toFixed(1)),
    runner_run_ms: runner.map((r) => +r.runMs.toFixed(1)),
    ansible_median_ms: +ansibleMs.toFixed(1),
    runner_median_ms: +runnerMs.toFixed(1),
    ratio: +ratio.toFixed(2),
    target_ratio: TARGET_RATIO,
    target_met: met,
  }),
);
