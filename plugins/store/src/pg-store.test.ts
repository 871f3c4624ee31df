// What only the PostgreSQL backend has: the URL's password kept out of every message, a clear 503
// naming the cause when the database is away, and recovery once it answers again.
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../../../test/support/postgres.js';
import { recordingLogger } from '../test-fixtures/recording-logger.js';
import { PostgresStore, redactUrl } from './pg-store.js';

describe('redactUrl', () => {
  it('replaces the password and keeps the rest', () => {
    expect(redactUrl('postgres://runner:s3cr%40t@db.example:5432/runner?sslmode=require')).toBe(
      'postgres://runner:***@db.example:5432/runner?sslmode=require',
    );
    expect(redactUrl('postgres://runner@db.example/runner')).toBe('postgres://runner@db.example/runner');
    expect(redactUrl('not a url://user:pw@host')).toBe('not a url://***@host');
  });
});

describe('a database that does not answer', () => {
  it('fails with a 503 naming the address and the cause, never the password', async () => {
    const error = (await PostgresStore.open(
      { url: 'postgres://runner:hunter2@127.0.0.1:1/runner', connectTimeoutMs: 5_000 },
      recordingLogger(),
    ).then(
      () => undefined,
      (e: unknown) => e,
    )) as Error & { code: string; status: number };
    expect(error).toMatchObject({ code: 'store_unavailable', status: 503 });
    expect(error.message).toMatch(
      /^PostgreSQL at postgres:\/\/runner:\*\*\*@127\.0\.0\.1:1\/runner is unavailable \(.*ECONNREFUSED/,
    );
    expect(error.message).not.toContain('hunter2');
  });
});

describe.skipIf(!postgresReachable())('a database that drops its connections', () => {
  let db: TestDatabase;
  afterAll(() => db?.drop());

  it('answers again once it is back: the pool replaces the connections the server ended', async () => {
    db = createTestDatabase('pg_store');
    const logger = recordingLogger();
    const store = await PostgresStore.open({ url: db.url, poolSize: 2 }, logger);
    try {
      await store.migrate('t', [{ id: 1, description: 't', sql: 'CREATE TABLE t (v INTEGER)' }]);
      await store.run('INSERT INTO t (v) VALUES (?)', [1]);
      // What a restart does to this master's connections.
      db.psql(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${db.name}' AND pid <> pg_backend_pid()`,
      );
      let answer: unknown;
      const deadline = Date.now() + 20_000;
      while (answer === undefined && Date.now() < deadline) {
        answer = await store.get('SELECT COUNT(*) AS n FROM t').catch((error: { status?: number }) => {
          expect(error.status).toBe(503);
          return undefined;
        });
      }
      expect(answer).toEqual({ n: 1 });
      await store.run('INSERT INTO t (v) VALUES (?)', [2]);
      expect(await store.get('SELECT SUM(v) AS n FROM t')).toEqual({ n: 3 });
    } finally {
      await store.close();
    }
  });
});
