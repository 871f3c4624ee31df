// `runner db stats` without a master: the retention policies a master would run are built by their
// plugins over the store (the same functions the master registers) and reported with what each
// keeps and would prune, without pruning anything. A real master writes the runs and audit records,
// then stops; the command runs as its own process.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
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

describe('runner db stats without a master', () => {
  it("reports each policy's kept and due figures from the master's own policies, and prunes nothing", async () => {
    const masterDir = tempDataDir('db-stats-offline-');
    const master = spawnRunner(['server', '--http-port', '0', '--bind-address', '127.0.0.1', '--port', '0'], {
      env: { RUNNER_DATA_DIR: masterDir },
    });
    children.push(master);
    const [, http] = await waitForOutput(master, /REST API listening on (127\.0\.0\.1:\d+)/);
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
