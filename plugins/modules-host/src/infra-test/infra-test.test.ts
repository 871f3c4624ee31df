// Real files, a real listening socket and HTTP server on ephemeral ports, real commands.
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { luaCallContext } from '@runner/plugin-sdk/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInfraTestModule } from './infra-test.js';

const infra = createInfraTestModule();
const dir = mkdtempSync(join(tmpdir(), 'infra-test-'));
const conf = join(dir, 'app.conf');
let server: Server;
let port: number;

beforeAll(async () => {
  writeFileSync(conf, 'port=8080\n');
  chmodSync(conf, 0o640);
  server = createServer((req, res) => {
    res.statusCode = req.url === '/health' ? 200 : 404;
    res.end(req.url === '/health' ? 'ok' : 'missing');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(() => server.close());

describe('infra_test', () => {
  it('passes when every assertion holds', async () => {
    const { call } = luaCallContext();
    expect(
      await infra.verify(call, [
        { file: conf, mode: '0640', owner: 'root', group: 'root', contains: 'port=8080' },
        { file: join(dir, 'nothing'), exists: false },
        { port, listening: true },
        { package: 'git' },
        { package: 'cowsay', installed: false },
        { http: `http://127.0.0.1:${port}/health`, status: 200, body_contains: 'ok' },
        { command: 'echo hello', stdout_contains: 'hello' },
      ]),
    ).toEqual({ passed: 7 });
  });

  it('checks every assertion and fails listing each failure', async () => {
    const { call } = luaCallContext();
    const failing = [
      { file: conf, mode: '0644', contains: 'port=9090' },
      { port: 1, listening: true },
      { package: 'cowsay' },
      { http: `http://127.0.0.1:${port}/x` },
      { command: 'exit 3' },
      { file: conf },
    ];
    await expect(infra.verify(call, failing)).rejects.toThrow(
      [
        'infra_test: 5 of 6 assertions failed:',
        `  - file ${conf}: mode is 0640, expected 0644`,
        `  - file ${conf}: does not contain "port=9090"`,
        '  - port 1: nothing listens on it',
        '  - package cowsay: is not installed',
        `  - http http://127.0.0.1:${port}/x: status 404, expected 200`,
        '  - command exit 3: exit code 3, expected 0',
      ].join('\n'),
    );
    expect(await infra.check(call, [{ port: 1 }])).toEqual({
      ok: false,
      passed: 0,
      failures: ['port 1: nothing listens on it'],
    });
  });

  it('skips commands in dry-run, and refuses a malformed assertion', async () => {
    expect(await infra.check(luaCallContext({ dryRun: true }).call, [{ command: 'exit 1' }])).toMatchObject({
      ok: true,
    });
    await expect(infra.check(luaCallContext().call, [{ file: conf, port: 1 }])).rejects.toThrow(
      'infra_test: assertion 1 must name exactly one of file, port, service, package, http, command (it names file, port)',
    );
  });
});
