// `runner db stats` without a master: the retention policies a master would run are built by their
// plugins over the store (the same functions the master registers) and reported with what each
// keeps and would prune, without pruning anything. A real master writes the runs and audit records,
// then stops; the command runs as its own process. The same data directory is then moved up to
// PostgreSQL and back with `runner db copy`, and backed up from PostgreSQL.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../support/postgres.js';
import {
  finished,
  runRunner,
  runToEnd,
  spawnRunner,
  stopAll,
  tempDataDir,
  waitForOutput,
  type Finished,
} from './helpers.js';

interface Policy {
  name: string;
  rule: string;
  kept: number;
  due?: number;
  lastPrunedAt: string | null;
}

const children: ReturnType<typeof spawnRunner>[] = [];
afterEach(() => stopAll(children.splice(0)));
/** The data directory the first test's master wrote (three runs, their audit records). */
let written: string | undefined;

describe('runner db stats without a master', () => {
  it("reports each policy's kept and due figures from the master's own policies, and prunes nothing", async () => {
    const masterDir = tempDataDir('db-stats-offline-');
    const master = spawnRunner(['server', '--http-port', '0', '--bind-address', '127.0.0.1', '--port', '0'], {
      env: { RUNNER_DATA_DIR: masterDir },
    });
    children.push(master);
    const [, http] = await waitForOutput(master, /REST API listening on (127\.0\.0\.1:\d+)/);
    written = masterDir;
    const fleet = { masterDir, base: `http://${http}/api/v1` };
    for (let i = 0; i < 3; i++) {
      const run = await runToEnd(fleet, {
        content: `version: "1.0"\ntasks:\n  - name: only\n    exec:\n      script: return true\n`,
        workflow_name: `offline-${i}`,
      });
      expect(run.status).toBe('succeeded');
    }
    master.kill('SIGTERM');
    expect((await finished(master)).code).toBe(0);

    // Keep only the newest run: the other two are past the rule, and stay until a master prunes.
    const config = join(masterDir, 'keep-one.yaml');
    writeFileSync(config, 'engine:\n  retention:\n    max_runs: 1\n');
    const stats = async (...args: string[]): Promise<Finished> =>
      runRunner(['db', 'stats', '--config', config, ...args], { env: { RUNNER_DATA_DIR: masterDir } });
    const json = await stats('--output', 'json');
    expect(json.code, json.stderr).toBe(0);
    const policies = (JSON.parse(json.stdout) as { retention: Policy[] }).retention;
    const byName = new Map(policies.map((p) => [p.name, p]));
    expect([...byName.keys()]).toEqual(
      expect.arrayContaining(['executions', 'task logs', 'audit records', 'revoked sessions']),
    );
    expect(byName.get('executions')).toMatchObject({
      rule: expect.stringContaining('the newest 1 (engine.retention.max_age, engine.retention.max_runs)'),
      kept: 3,
      due: 2,
      lastPrunedAt: null,
    });
    // Task logs go by their own keys (30 days by default): none due yet.
    expect(byName.get('task logs')).toMatchObject({ kept: 3, due: 0 });
    // The three POSTs were audited; the default keeps them.
    expect(byName.get('audit records')).toMatchObject({ due: 0 });
    expect(byName.get('audit records')?.kept).toBeGreaterThanOrEqual(3);
    expect(byName.get('revoked sessions')).toMatchObject({ kept: 0, due: 0 });

    const text = await stats();
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('no master has this data directory open: nothing is pruned until one does');
    expect(text.stdout).toMatch(/executions: keeps .*the newest 1/);
    expect(text.stdout).toContain('kept now 3');
    expect(text.stdout).toContain("2 past the rule: a master's first pass removes them");
    expect(text.stdout).toMatch(/task logs: keeps .*\n {4}kept now 3, oldest \S+; none past the rule\n/);

    // Reporting removed nothing: the runs are all still there.
    const again = JSON.parse((await stats('--output', 'json')).stdout) as { tables: { name: string; rows: number }[] };
    expect(again.tables.find((t) => t.name === 'runs')?.rows).toBe(3);
  });
});

type Tables = { name: string; rows: number }[];

describe.skipIf(!postgresReachable())('runner db copy and backup between a data directory and PostgreSQL', () => {
  const databases: TestDatabase[] = [];
  afterAll(() => databases.forEach((db) => db.drop()));

  it("moves a master's data directory up to PostgreSQL and back, every table verified", async () => {
    const dataDir = written;
    if (dataDir === undefined) throw new Error('the first test of this file wrote no data directory');
    const db = createTestDatabase('db_copy_cli');
    databases.push(db);
    const stats = async (env: Record<string, string>): Promise<Tables> => {
      const done = await runRunner(['db', 'stats', '--output', 'json'], { env });
      expect(done.code, done.stderr).toBe(0);
      return (JSON.parse(done.stdout) as { tables: Tables }).tables.filter((t) => !t.name.startsWith('_'));
    };
    const before = await stats({ RUNNER_DATA_DIR: dataDir });
    expect(before.find((t) => t.name === 'runs')?.rows).toBe(3);

    // `runner doctor` on an empty database: it answers, its version, nothing migrated yet.
    const doctor = async (url: string) =>
      (await runRunner(['doctor'], { env: { RUNNER_DATA_DIR: dataDir, RUNNER_STORE_URL: url } })).stdout;
    expect(await doctor(db.url)).toMatch(/store +PostgreSQL 1\d\.\d+ .* at postgres:\/\/postgres@127\.0\.0\.1:5432\//);
    expect(await doctor(db.url)).toMatch(/schema +the database is empty/);

    // Up: every plugin's tables are created on PostgreSQL by its own migrations, then filled.
    const up = await runRunner(['db', 'copy', '--from', dataDir, '--to', db.url], {
      env: { RUNNER_DATA_DIR: dataDir },
    });
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toMatch(/each verified/);
    expect(up.stdout).toMatch(/\nruns +3 +[0-9a-f]{16}\n/);
    const onPostgres = await stats({ RUNNER_DATA_DIR: dataDir, RUNNER_STORE_URL: db.url });
    expect(onPostgres).toEqual(expect.arrayContaining(before));

    // The masters' heartbeat table is the one thing a data directory never had: a master makes it.
    expect(await doctor(db.url)).toMatch(/schema +1 migration pending \(cluster\)/);
    const away = await doctor('postgres://postgres:hunter2@127.0.0.1:1/none');
    expect(away).toMatch(/store +PostgreSQL at postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/none does not answer/);
    expect(away).not.toContain('hunter2');

    // Again into the same database: refused, it holds rows now.
    const again = await runRunner(['db', 'copy', '--from', dataDir, '--to', db.url], {
      env: { RUNNER_DATA_DIR: dataDir },
    });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/already holds data .*--overwrite/);

    // Down into a new data directory, from the database's own logical backup too.
    const back = tempDataDir('db-copy-back-');
    const down = await runRunner(['db', 'copy', '--from', db.url, '--to', back, '--output', 'json'], {
      env: { RUNNER_DATA_DIR: back },
    });
    expect(down.code, down.stderr).toBe(0);
    const copied = JSON.parse(down.stdout) as { tables: { table: string; rows: number }[] };
    expect(copied.tables.find((t) => t.table === 'runs')?.rows).toBe(3);
    expect(await stats({ RUNNER_DATA_DIR: back })).toEqual(before);

    const file = `${back}/from-postgres.db`;
    const backup = await runRunner(['db', 'backup', '--output', file], {
      env: { RUNNER_DATA_DIR: back, RUNNER_STORE_URL: db.url },
    });
    expect(backup.code, backup.stderr).toBe(0);
    expect(existsSync(file)).toBe(true);
    const restoredDir = tempDataDir('db-restored-');
    const restore = await runRunner(['db', 'restore', file], { env: { RUNNER_DATA_DIR: restoredDir } });
    expect(restore.code, restore.stderr).toBe(0);
    expect(await stats({ RUNNER_DATA_DIR: restoredDir })).toEqual(before);
  });
});
