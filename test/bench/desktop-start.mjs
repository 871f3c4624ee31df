// The desktop app's start and quit with the embedded master: the built desktop/dist/main.cjs run
// under Node with the electron stand-in (desktop/src/electron-double.cjs; Electron's binary cannot
// be had here), timing from launch to the window loading the master's URL, to the tray showing it
// up, and from quit to the process gone (the master stopped first). A first launch (new user data:
// the master creates its store and admin account) and later launches (same user data).
// Run: npm run build && node test/bench/desktop-start.mjs [launches]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';

const launches = Number(process.argv[2] ?? 5);
const root = resolve(import.meta.dirname, '../..');
const userData = mkdtempSync(join(tmpdir(), 'runner-bench-desktop-'));

function launch() {
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    ['--require', join(root, 'desktop/src/electron-double-hook.cjs'), join(root, 'desktop/dist/main.cjs')],
    {
      env: {
        PATH: process.env.PATH,
        DOUBLE_USER_DATA: userData,
        DOUBLE_APP_PATH: join(root, 'desktop'),
        RUNNER_BIN: join(root, 'kernel/bin/runner.js'),
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    },
  );
  const times = {};
  return new Promise((resolveLaunch, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const [event, detail] = JSON.parse(line);
      if (event === 'loadURL') times.loadedMs = performance.now() - t0;
      if (event === 'tooltip' && String(detail).includes(' is up ') && times.upMs === undefined) {
        times.upMs = performance.now() - t0;
        times.quitAt = performance.now();
        child.stdin.write('quit\n');
      }
      if (event === 'errorBox' || event === 'messageBox') reject(new Error(`${event}: ${JSON.stringify(detail)}`));
    });
    child.once('exit', (code) => {
      if (code !== 0 || times.quitAt === undefined) return reject(new Error(`exited with ${code} before it was up`));
      times.quitMs = performance.now() - times.quitAt;
      delete times.quitAt;
      resolveLaunch(times);
    });
  });
}

const results = [];
for (let i = 0; i < launches; i++) results.push(await launch());
rmSync(userData, { recursive: true, force: true });
const later = results.slice(1);
const median = (key) => {
  const values = later.map((r) => r[key]).sort((a, b) => a - b);
  return values[Math.floor(values.length / 2)];
};
const round = (n) => Math.round(n);
console.log(
  `first launch: window loads the embedded master after ${round(results[0].loadedMs)} ms, tray up after ${round(results[0].upMs)} ms, quit (master stopped) in ${round(results[0].quitMs)} ms`,
);
console.log(
  `later launches (median of ${later.length}): loads after ${round(median('loadedMs'))} ms, up after ${round(median('upMs'))} ms, quit in ${round(median('quitMs'))} ms`,
);
console.log(
  JSON.stringify({
    bench: 'desktop-start',
    first: Object.fromEntries(Object.entries(results[0]).map(([k, v]) => [k, round(v)])),
    later_median: { loadedMs: round(median('loadedMs')), upMs: round(median('upMs')), quitMs: round(median('quitMs')) },
  }),
);
