import {
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  statSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { canRunPrivatePostgres, privatePostgres } from '../support/postgres.js';
import { canMount, fillFileSystem, mountTmpfs } from '../support/tmpfs.js';
import { finished, freePort, runRunner, spawnRunner, tempDataDir } from './helpers.js';

/**
 * Faults of the disk and the files under a real master (issue 17, item 5): the data directory on a
 * small tmpfs that fills up while runs go on, each damage of the store's files at rest, and a
 * PostgreSQL server of the test's own stopped and started under a master.
 */

if (!canMount) console.log('store-faults: the full-disk test is skipped, mounting a tmpfs needs root');

const RUN = `version: "1.0"
tasks:
  - name: only
    exec:
      script: return true, "done"
`;

type Master = ReturnType<typeof spawnRunner> & {
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
};

async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, ms = 30_000): Promise<T> {
  for (const started = Date.now(); ; await sleep(100)) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
  }
}

function spawnMaster(dataDir: string, httpPort: number, grpcPort: number, env: Record<string, string> = {}): Master {
  const child = spawnRunner(
    ['server', '--http-port', String(httpPort), '--bind-address', '127.0.0.1', '--port', String(grpcPort)],
    { env: { RUNNER_DATA_DIR: dataDir, RUNNER_GRPC_BIND_ADDRESS: '127.0.0.1', ...env } },
  ) as Master;
  const tokenFile = join(dataDir, 'auth', 'local.token');
  child.api = async (method, path, body) => {
    // Rewritten at each start: read for each request.
    const token = existsSync(tokenFile) ? readFileSync(tokenFile, 'utf8').trim() : undefined;
    const response = await fetch(`http://127.0.0.1:${httpPort}/api/v1${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(120_000),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  return child;
}

async function startMaster(dataDir: string, env: Record<string, string> = {}): Promise<Master> {
  const child = spawnMaster(dataDir, await freePort(), await freePort(), env);
  await until(
    'the master answered /health',
    async () => {
      if (child.exitCode !== null) throw new Error(`runner server exited: ${child.output.stderr}`);
      return child.api('GET', '/health').then(
        (r) => (r.status === 200 ? true : undefined),
        () => undefined,
      );
    },
    45_000,
  );
  return child;
}

async function submit(master: Master): Promise<{ status: number; body: any }> {
  return master.api('POST', '/workflows/run', { workflow_name: 'fault', content: RUN });
}

async function stop(master: Master, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  const done = finished(master);
  master.kill(signal);
  // A ceiling, not a timing: the master hung at exit retrying a log write.
  const result = await Promise.race([done, sleep(60_000).then(() => undefined)]);
  if (result === undefined) {
    master.kill('SIGKILL');
    throw new Error(`the master did not exit within 60 s of ${signal}:\n${master.output.stderr.slice(-3000)}`);
  }
}

const unmounts: (() => void)[] = [];
afterAll(() => {
  for (const unmount of unmounts) unmount();
});

describe.skipIf(!canMount)('a full file system under the data directory', () => {
  it('keeps reads answering, refuses writes with 503, says degraded, and recovers without losing an acknowledged run', async () => {
    const dataDir = tempDataDir('runner-full-');
    unmounts.push(mountTmpfs(dataDir, '24m'));
    // At debug every request is logged: the log file needs a new page soon after the disk filled
    // (a line that fits the last page's free bytes would still be written).
    const master = await startMaster(dataDir, { RUNNER_DEBUG: '1' });
    try {
      const acknowledged = new Set<string>();
      const refusals: any[] = [];
      let submitting = true;
      // Runs go on, open loop: a request stuck behind the full disk does not hold up the others.
      const inFlight: Promise<void>[] = [];
      const submitter = (async () => {
        while (submitting) {
          inFlight.push(
            submit(master).then(
              (r) => {
                if (r.status === 202) acknowledged.add(r.body.id);
                else refusals.push(r);
              },
              () => undefined,
            ),
          );
          await sleep(20);
        }
      })();
      await until('runs acknowledged before the disk filled', () => (acknowledged.size >= 20 ? true : undefined));
      const filler = fillFileSystem(dataDir);

      const refusal = await until('a write refused', () => refusals.find((r) => r.status === 503));
      expect(refusal.body.error.code).toBe('store_disk_full');
      expect(refusal.body.error.message).toContain(
        `the file system holding the store ${join(dataDir, 'store')} is full`,
      );
      expect(refusal.body.error.message).toContain('reads still answer');
      expect(refusals.filter((r) => r.status !== 503)).toEqual([]);
      const health = await master.api('GET', '/health');
      expect(health.status).toBe(200);
      expect(health.body.status).toBe('degraded');
      expect(health.body.degraded).toEqual([
        expect.objectContaining({ source: 'store', reason: expect.stringContaining('file system is full') }),
      ]);
      const list = await master.api('GET', '/executions?limit=5');
      expect(list.status).toBe(200);
      const one = await master.api('GET', `/executions/${[...acknowledged][0]}`);
      expect(one.status).toBe(200);
      await until('the log fell back to stderr', () =>
        /cannot write the log file .*runner\.log \(ENOSPC\); logging to stderr/.test(master.output.stderr)
          ? true
          : undefined,
      );

      unlinkSync(filler);
      await until('health ok again', async () =>
        (await master.api('GET', '/health')).body.status === 'ok' ? true : undefined,
      );
      submitting = false;
      await submitter;
      await Promise.all(inFlight);
      const after = await submit(master);
      expect(after.status).toBe(202);
      acknowledged.add(after.body.id);
      await until('the run after recovery ended', async () => {
        const run = await master.api('GET', `/executions/${after.body.id}`);
        return run.body.status === 'succeeded' ? true : undefined;
      });
      await until('the log file written again', () =>
        /the log file .* can be written again/.test(master.output.stderr) ? true : undefined,
      );
      // Full again, and stopped while full: the master exits (the hung at exit) and what
      // it acknowledged is still there once space is back.
      const fullAgain = fillFileSystem(dataDir);
      // Not awaited one by one: the write that meets the full disk waits for space.
      let refusedAgain = false;
      await until('a write refused again', () => {
        submit(master).then(
          (r) => {
            if (r.status === 202) acknowledged.add(r.body.id);
            refusedAgain ||= r.status === 503;
          },
          () => undefined,
        );
        return refusedAgain ? true : undefined;
      });
      await stop(master);
      unlinkSync(fullAgain);

      const again = await startMaster(dataDir);
      try {
        const missing: string[] = [];
        for (const id of acknowledged) {
          const found = await again.api('GET', `/executions/${id}`);
          if (found.status !== 200) missing.push(`${id}: ${found.status}`);
        }
        expect(missing).toEqual([]);
      } finally {
        await stop(again);
      }
    } finally {
      if (master.exitCode === null && master.signalCode === null) master.kill('SIGKILL');
    }
  }, 300_000);
});

/** Parses the journal's record headers (see plugins/store/src/journal.ts): the last sequence number. */
function lastJournalSeq(storeDir: string): number {
  let last = 0;
  for (const name of journalNames(storeDir)) {
    const data = readFileSync(join(storeDir, name));
    for (let offset = 0; offset + 16 <= data.length;) {
      const length = data.readUInt32LE(offset);
      if (offset + 16 + length > data.length) break;
      last = data.readUInt32LE(offset + 8) + data.readUInt32LE(offset + 12) * 2 ** 32;
      offset += 16 + length;
    }
  }
  return last;
}

function journalNames(storeDir: string): string[] {
  return readdirSync(storeDir)
    .filter((n) => /^journal-\d+\.log$/.test(n))
    .sort();
}

describe('damaged store files at start', () => {
  /** A data directory whose snapshot holds the first runs and whose journal holds the later ones. */
  async function damagedLater(): Promise<{ base: string; before: string[]; later: string[] }> {
    const base = tempDataDir('runner-damage-');
    let master = await startMaster(base);
    const before: string[] = [];
    for (let i = 0; i < 15; i++) before.push((await submit(master)).body.id);
    await until('the first runs ended', async () =>
      (await master.api('GET', '/executions?status=running')).body.total === 0 ? true : undefined,
    );
    await stop(master); // a clean stop folds everything into the snapshot
    master = await startMaster(base);
    const later: string[] = [];
    for (let i = 0; i < 15; i++) later.push((await submit(master)).body.id);
    await until('the later runs ended', async () =>
      (await master.api('GET', '/executions?status=running')).body.total === 0 ? true : undefined,
    );
    // The mark follows the journal once a second; the kill comes once it caught up.
    const store = join(base, 'store');
    await until('the mark caught up with the journal', () => {
      const mark = JSON.parse(readFileSync(join(store, 'mark.json'), 'utf8'));
      return mark.journal.ackedSeq >= lastJournalSeq(store) ? true : undefined;
    });
    await stop(master, 'SIGKILL');
    return { base, before, later };
  }

  const copy = (base: string, name: string) => {
    const dir = tempDataDir(`runner-damage-${name}-`);
    cpSync(base, dir, { recursive: true });
    return dir;
  };

  it('refuses each damage with a message, and runner db repair reports what it dropped so the master starts', async () => {
    const { base, before } = await damagedLater();
    const store = (dir: string) => join(dir, 'store');
    const journal = (dir: string) => join(store(dir), journalNames(store(dir)).at(-1) as string);
    const cases: { name: string; damage(dir: string): void; refused: RegExp; repaired: RegExp }[] = [
      {
        name: 'half',
        damage: (dir) => truncateSync(journal(dir), Math.floor(statSync(journal(dir)).size / 2)),
        refused:
          /store file .*journal-\d+\.log: it ends at record \d+, but .*mark\.json saw records up to \d+ acknowledged: records \d+\.\.\d+ are lost\. Refusing to start/,
        repaired:
          /journal-\d+\.log: applied records \d+\.\.\d+; dropped an incomplete last record[\s\S]*lost: records \d+\.\.\d+, acknowledged per mark\.json/,
      },
      {
        name: 'zero',
        damage: (dir) => truncateSync(journal(dir), 0),
        refused: /it ends at record \d+, but .* records \d+\.\.\d+ are lost\. Refusing to start/,
        repaired: /journal-\d+\.log: nothing applied[\s\S]*lost: records \d+\.\.\d+/,
      },
      {
        name: 'deleted',
        damage: (dir) => unlinkSync(journal(dir)),
        refused:
          /store file .*journal-\d+\.log: it is missing and no journal file is left, .* are lost\. Refusing to start/,
        repaired: /lost: records \d+\.\.\d+, acknowledged per mark\.json/,
      },
      {
        name: 'garbage',
        damage: (dir) => {
          const path = join(store(dir), 'snapshot.db');
          const image = readFileSync(path);
          image.fill(0x5a, image.length - 4096, image.length);
          writeFileSync(path, image);
        },
        refused:
          /store file .*snapshot\.db: its SHA-256 \w+\.\.\. \(\d+ bytes\) matches neither the snapshot .* Refusing to start/,
        repaired:
          /snapshot\.db: damaged \(its SHA-256 differs from the one .*mark\.json recorded\); read table by table:\n(\s+\S+\s+\d+ rows.*\n)+/,
      },
    ];
    for (const c of cases) {
      const dir = copy(base, c.name);
      c.damage(dir);
      const refused = spawnMaster(dir, await freePort(), await freePort());
      const result = await finished(refused);
      expect(result.code, `${c.name}: ${result.stderr}`).not.toBe(0);
      expect(result.stderr, c.name).toMatch(c.refused);

      const repair = await runRunner(['db', 'repair'], { env: { RUNNER_DATA_DIR: dir } });
      expect(repair.code, `${c.name}: ${repair.stderr}`).toBe(0);
      expect(repair.stdout, c.name).toMatch(c.repaired);
      if (process.env.SHOW_FAULTS) console.log(`${c.name}\n${result.stderr}\n${repair.stdout}`);
      expect(repair.stdout, c.name).toMatch(
        /repaired: the store holds every record up to \d+; the original files are in /,
      );

      const master = await startMaster(dir);
      try {
        if (c.name !== 'garbage') {
          // The journal's damage leaves the snapshot's runs whole.
          for (const id of before) expect((await master.api('GET', `/executions/${id}`)).status, c.name).toBe(200);
        }
        expect((await submit(master)).status, c.name).toBe(202);
      } finally {
        await stop(master);
      }
    }
  }, 600_000);
});

describe.skipIf(!canRunPrivatePostgres)('PostgreSQL stopped and started under a master', () => {
  it('answers 503 naming the database while it is away, says degraded, recovers, and loses no acknowledged run', async () => {
    const postgres = privatePostgres(await freePort());
    // Trust authentication takes any password: this one must appear nowhere.
    const url = postgres.url.replace('postgres@', 'postgres:hunter2-secret@');
    const master = await startMaster(tempDataDir('pg-outage-'), { RUNNER_STORE_URL: url });
    try {
      const acknowledged: string[] = [];
      const submitAll = async (n: number) => {
        for (let i = 0; i < n; i++) {
          const answer = await submit(master);
          if (answer.status === 202) acknowledged.push(answer.body.id);
        }
      };
      await submitAll(10);
      expect(acknowledged).toHaveLength(10);

      postgres.stop();
      // A request may meet a kept-alive socket the master is closing just then (undici's "other
      // side closed"): asked again, unless the master itself is gone.
      const submitOnce = () =>
        submit(master).catch((error: unknown) => {
          if (master.exitCode !== null) throw error;
          return { status: 0, body: undefined };
        });
      const refusal = await until('a refused write', async () => {
        const answer = await submitOnce();
        if (answer.status === 202) acknowledged.push(answer.body.id);
        return answer.status === 503 ? answer : undefined;
      });
      expect(refusal.body.error.code).toBe('store_unavailable');
      // Named with its address, never a password; the master retries on the next request.
      expect(refusal.body.error.message).toMatch(
        new RegExp(
          `PostgreSQL at postgres://postgres:\\*\\*\\*@127\\.0\\.0\\.1:${new URL(url).port}/postgres is unavailable`,
        ),
      );
      const health = await master.api('GET', '/health');
      expect(health.body).toMatchObject({
        status: 'degraded',
        degraded: [expect.objectContaining({ source: 'store' })],
      });

      postgres.start();
      await until('a write accepted again', async () => {
        const answer = await submitOnce();
        if (answer.status === 202) acknowledged.push(answer.body.id);
        return answer.status === 202 ? true : undefined;
      });
      await submitAll(5);
      expect((await master.api('GET', '/health')).body.status).toBe('ok');
      // Every acknowledged run is there and ends.
      for (const id of acknowledged) {
        const run = await until(`run ${id} ended`, async () => {
          const answer = await master.api('GET', `/executions/${id}`);
          return answer.status === 200 && answer.body.status !== 'running' ? answer.body : undefined;
        });
        expect(run.id).toBe(id);
      }
      expect(JSON.stringify(refusal.body) + master.output.stdout + master.output.stderr).not.toContain('hunter2');
    } catch (error) {
      throw new Error(`${(error as Error).message}\nthe master's stderr:\n${master.output.stderr.slice(-4000)}`, {
        cause: error,
      });
    } finally {
      await stop(master).catch(() => master.kill('SIGKILL'));
      postgres.destroy();
    }
  });
});
