import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRunner } from './helpers.js';

/** `runner server` on a port another program holds: a clear error, and no new data directory left. */
describe('runner server on a busy port', () => {
  let holder: Server;
  let port: number;
  beforeAll(async () => {
    holder = createServer();
    port = await new Promise<number>((resolve) =>
      holder.listen(0, '127.0.0.1', () => resolve((holder.address() as { port: number }).port)),
    );
  });
  afterAll(() => new Promise((resolve) => holder.close(resolve)));

  const serve = (dataDir: string) =>
    runRunner(['server', '--http-port', String(port), '--port', '0', '--bind-address', '127.0.0.1'], {
      env: { RUNNER_DATA_DIR: dataDir },
    });

  it('removes the data directory it created', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'runner-busy-')), 'new-data-dir');
    const result = await serve(dataDir);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot listen on 127.0.0.1:${port}: address already in use`);
    expect(result.stderr).toContain(`runner: removed ${dataDir}, created by this command that could not start`);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('leaves a data directory that existed before alone', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'runner-busy-existing-'));
    const result = await serve(dataDir);
    expect(result.code).toBe(1);
    expect(result.stderr).not.toContain('removed');
    expect(readdirSync(dataDir)).toEqual(expect.arrayContaining(['logs', 'store']));
  });
});
