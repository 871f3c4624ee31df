// A set-up file (vitest.config.ts, setupFiles): each test file's temporary files go to a directory
// of its own under the system's, removed once the file is over. Its afterAll is the first
// registered, so it runs after the file's own (those stop its processes). Without it the suite left
// what every test made with mkdtemp behind: nine runs, 11,000 entries and 5 GB in /tmp.
// os.tmpdir() reads TMPDIR at each call, and children inherit it, so runner processes the file
// starts put their scratch files there too.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

// The worker's own, before any file changed it (files share a worker's globals: isolate is off).
// Kept on globalThis, not in the environment: the runner reads RUNNER_* variables as its config,
// and children inherit the rest.
const worker = globalThis as { runnerSystemTmpdir?: string };
worker.runnerSystemTmpdir ??= tmpdir();
const systemTmp = worker.runnerSystemTmpdir;
// Short (rt-XXXXXX): Unix sockets made under it (tmux) must keep their paths under 108 bytes.
const fileTmp = mkdtempSync(join(systemTmp, 'rt-'));
// Open as /tmp is (sticky): the local tasks' user (runner-exec) and the SSH tests' users reach
// the directories the tests make for them under it.
chmodSync(fileTmp, 0o1777);
process.env.TMPDIR = fileTmp;

afterAll(() => {
  process.env.TMPDIR = systemTmp;
  remove(fileTmp);
});

/**
 * Removes `dir`, never failing the file: a process the file started may still be stopping and
 * write into it meanwhile (a master's snapshot at exit), so what fails is tried again 2 s later,
 * three times (the worker goes on with the next files), and what still fails is left.
 */
function remove(dir: string, triesLeft = 3): void {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    if (triesLeft > 0) setTimeout(() => remove(dir, triesLeft - 1), 2_000).unref();
  }
}
