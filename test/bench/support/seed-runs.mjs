// Executions written straight into a data directory's store (SQL through the store's own journal
// and snapshot), for benchmarks that need many stored runs: submitting 10,000 runs over REST took
// over 8 minutes on these machines. The master must have run once on the directory (its schema
// is the engine's migrations) and be stopped: the store's lock is taken while seeding.
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { root } from './master.mjs';

const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const WORKFLOWS = ['build', 'deploy', 'backup', 'report'];
const STATEMENTS_PER_TRANSACTION = 2000;

/**
 * Writes `count` one-task runs, ended, started one a few seconds apart up to a minute ago (inside
 * the default retention), every tenth failed, four workflow names; resolves with the time taken.
 */
export async function seedRuns(dataDir, count) {
  const { openStore } = await import(pathToFileURL(join(root, 'plugins/store/dist/index.js')).href);
  const started = performance.now();
  const store = await openStore(dataDir, silent);
  try {
    const end = Date.now() - 60_000;
    let batch = [];
    for (let i = 0; i < count; i++) {
      const at = new Date(end - (count - i) * 5_000);
      const done = new Date(at.getTime() + 120);
      const failed = i % 10 === 0;
      const status = failed ? 'failed' : 'succeeded';
      const id = `r-seed${String(i).padStart(6, '0')}`;
      const log = JSON.stringify([{ timestamp: at.toISOString(), level: 'info', message: `run ${i}` }]);
      batch.push(
        {
          sql: `INSERT INTO runs (id, workflow_name, status, dry_run, started_at, completed_at, duration, error, trigger, counts, user)
                VALUES (?, ?, ?, 0, ?, ?, 0.12, ?, 'api', ?, 'seed')`,
          params: [
            id,
            WORKFLOWS[i % WORKFLOWS.length],
            status,
            at.toISOString(),
            done.toISOString(),
            failed ? 'task only failed' : null,
            JSON.stringify({ [status]: 1 }),
          ],
        },
        {
          sql: `INSERT INTO run_tasks (run_id, seq, name, task, agent, status, attempts, started_at, completed_at, duration, message, log)
                VALUES (?, 0, 'only', 'only', 'localhost', ?, 1, ?, ?, 0.1, ?, ?)`,
          params: [id, status, at.toISOString(), done.toISOString(), `run ${i}`, log],
        },
      );
      if (batch.length >= STATEMENTS_PER_TRANSACTION) {
        await store.transaction(batch);
        batch = [];
      }
    }
    if (batch.length) await store.transaction(batch);
  } finally {
    await store.close();
  }
  return performance.now() - started;
}
