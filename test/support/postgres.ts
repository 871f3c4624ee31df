// PostgreSQL for tests: the machine's PostgreSQL 15 on 127.0.0.1:5432 (trust auth, user postgres),
// a database of its own per test file, dropped after. Without a reachable server the tests that
// need it skip, saying in one line how to start it; under CI (CI=true) that is a failure instead.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

const HOST = '127.0.0.1';
const PORT = '5432';
const USER = 'postgres';

export const START_POSTGRES =
  'PostgreSQL tests skipped: nothing answers on 127.0.0.1:5432; start it with `pg_ctlcluster --skip-systemctl-redirect 15 main start`';

let reachable: boolean | undefined;

/** Whether PostgreSQL answers; says once how to start it when not, and throws under CI. */
export function postgresReachable(): boolean {
  if (reachable === undefined) {
    const ready = spawnSync('pg_isready', ['-q', '-h', HOST, '-p', PORT, '-U', USER], { timeout: 10_000 });
    reachable = ready.status === 0;
    if (!reachable && process.env.CI === 'true') throw new Error(`${START_POSTGRES} (CI=true: required)`);
    if (!reachable) console.warn(START_POSTGRES);
  }
  return reachable;
}

export interface TestDatabase {
  name: string;
  /** `postgres://postgres@127.0.0.1:5432/<name>` */
  url: string;
  /** Runs SQL in this database, all in one transaction, stopping at the first error; returns the unaligned output. */
  psql(sql: string): string;
  drop(): void;
}

function psql(database: string, sql: string, options: { single?: boolean } = {}): string {
  const args = ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h', HOST, '-p', PORT, '-U', USER, '-d', database];
  if (options.single) args.push('-1');
  return execFileSync('psql', [...args, '-f', '-'], { input: sql, encoding: 'utf8', timeout: 60_000 });
}

/** A new, empty database named after `prefix` and a random suffix (test files run at once). */
export function createTestDatabase(prefix: string): TestDatabase {
  const name = `${prefix.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  psql('postgres', `CREATE DATABASE ${name}`);
  return {
    name,
    url: `postgres://${USER}@${HOST}:${PORT}/${name}`,
    psql: (sql) => psql(name, sql, { single: true }),
    drop: () => void psql('postgres', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

const PG_BIN = '/usr/lib/postgresql/15/bin';

/** A PostgreSQL server of the test's own (initdb in a temp dir): one a test may stop and start. */
export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  url: string;
  stop(): void;
  start(): void;
  /** Stops it and removes its files. */
  destroy(): void;
}

/** Whether a private server can be made here: PostgreSQL 15's binaries and root (to run them as postgres). */
export const canRunPrivatePostgres =
  process.getuid?.() === 0 && spawnSync(`${PG_BIN}/initdb`, ['--version']).status === 0;

/**
 * A new PostgreSQL cluster on `port` (the machine's own server stays untouched: stopping that one
 * would break every other test file's database). Runs as the postgres user; fsync off, for speed.
 */
export function privatePostgres(port: number): PrivatePostgres {
  const dir = execFileSync('mktemp', ['-d', '/tmp/runner-pg-XXXXXX'], { encoding: 'utf8' }).trim();
  execFileSync('chown', ['postgres', dir]);
  const asPostgres = (command: string, args: string[]) =>
    execFileSync('runuser', ['-u', 'postgres', '--', `${PG_BIN}/${command}`, ...args], {
      encoding: 'utf8',
      timeout: 60_000,
    });
  asPostgres('initdb', ['-D', `${dir}/data`, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off`;
  const control = (action: 'start' | 'stop') =>
    asPostgres('pg_ctl', ['-D', `${dir}/data`, '-l', `${dir}/log`, '-o', options, '-m', 'fast', '-w', action]);
  control('start');
  return {
    url: `postgres://${USER}@${HOST}:${port}/postgres`,
    stop: () => void control('stop'),
    start: () => void control('start'),
    destroy: () => {
      spawnSync('runuser', [
        '-u',
        'postgres',
        '--',
        `${PG_BIN}/pg_ctl`,
        '-D',
        `${dir}/data`,
        '-m',
        'immediate',
        'stop',
      ]);
      execFileSync('rm', ['-rf', dir]);
    },
  };
}
