import { mkdtempSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CommandContext } from './commands.js';
import type { RunnerConfig } from './config.js';
import { InvalidInputError, NotFoundError, RunnerError } from './errors.js';
import { connectMaster, createMasterClient, findMaster, type MasterLocator } from './master-client.js';
import { authPaths, readLogins, writeLogin } from './master-credentials.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function serve(handler: Handler): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const tempDir = () => mkdtempSync(join(tmpdir(), 'runner-master-client-'));

function context(dataDir: string, values: Record<string, string> = {}, locator?: MasterLocator): CommandContext {
  const config = {
    dataDir,
    debug: false,
    values,
    find: (key: string) => values[key],
    get: (key: string, fallback: unknown) => values[key] ?? fallback,
    sourceOf: (key: string) => (key in values ? `env RUNNER_${key.toUpperCase().replace('.', '_')}` : 'default'),
  } as unknown as RunnerConfig;
  return { config, masterLocator: async () => locator } as unknown as CommandContext;
}

describe('the master client', () => {
  it('sends JSON with the token from RUNNER_TOKEN, and parses the answer', async () => {
    const seen: { auth?: string; body: string; path?: string }[] = [];
    const base = await serve((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        seen.push({ auth: req.headers.authorization, body, path: req.url });
        res.setHeader('content-type', 'application/json');
        res.end('{"id":"r-1"}');
      });
    });
    const client = createMasterClient(
      { base, source: 'test', local: false },
      { dataDir: tempDir(), env: { RUNNER_TOKEN: 'env-token' } },
    );
    expect(await client.call('POST', '/workflows/run', { body: { content: 'x' } })).toEqual({ id: 'r-1' });
    expect(seen).toEqual([{ auth: 'Bearer env-token', body: '{"content":"x"}', path: '/api/v1/workflows/run' }]);
  });

  it('takes the saved login for that master, then the local token for its own master', async () => {
    const auths: (string | undefined)[] = [];
    const base = await serve((req, res) => {
      auths.push(req.headers.authorization);
      res.end('{}');
    });
    const dataDir = tempDir();
    await writeLogin(dataDir, `${base}/api/v1/`, { token: 'login-token', user: 'ops' });
    const { dir, logins, localToken } = authPaths(dataDir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(logins).mode & 0o777).toBe(0o600);
    expect(await readLogins(dataDir)).toEqual({ [base]: { token: 'login-token', user: 'ops' } });
    await createMasterClient({ base, source: 't', local: false }, { dataDir, env: {} }).call('GET', '/health');
    writeFileSync(localToken, 'local-token\n');
    await writeLogin(dataDir, base, { token: 'old', expires_at: '2000-01-01T00:00:00Z' });
    await createMasterClient({ base, source: 't', local: true }, { dataDir, env: {} }).call('GET', '/health');
    await createMasterClient({ base, source: 't', local: false }, { dataDir, env: {} }).call('GET', '/health');
    expect(auths).toEqual(['Bearer login-token', 'Bearer local-token', undefined]);
  });

  it('maps the API error body back to a RunnerError of the same kind and code', async () => {
    const base = await serve((req, res) => {
      res.statusCode = req.url?.endsWith('/missing') ? 404 : 400;
      res.end(
        JSON.stringify({
          error: { code: res.statusCode === 404 ? 'not_found' : 'invalid_workflow', message: 'bad', field: 'content' },
        }),
      );
    });
    const client = createMasterClient({ base, source: 't', local: false }, { dataDir: tempDir(), env: {} });
    const invalid = await client.call('POST', '/workflows/run', { body: {} }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(InvalidInputError);
    expect(invalid).toMatchObject({ code: 'invalid_workflow', status: 400, details: { field: 'content' } });
    // The master's words alone, as every command prints them; the request is the cause (--debug).
    expect((invalid as Error).message).toBe('bad');
    expect(((invalid as Error).cause as Error).message).toBe(`POST ${base}/api/v1/workflows/run: 400`);
    const missing = await client.call('GET', '/missing').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
  });

  it('names the URL and what to do when the connection is refused or unanswered', async () => {
    const base = await serve(() => {});
    const client = createMasterClient({ base, source: 'test', local: false }, { dataDir: tempDir(), env: {} });
    const slow = await client.call('GET', '/health', { timeoutMs: 100 }).catch((e: unknown) => e);
    expect(slow).toBeInstanceOf(RunnerError);
    expect((slow as Error).message).toBe(
      `cannot reach the master at ${base}/api/v1/health (from test): no answer within 0.1 s; is the master overloaded or the address wrong?`,
    );
    await Promise.all(
      servers.splice(0).map((s) => new Promise((resolve) => (s.closeAllConnections(), s.close(resolve)))),
    );
    const refused = await client.call('GET', '/health').catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'master_unreachable', status: 503 });
    expect((refused as Error).message).toContain('connection refused; is `runner server` running there');
  });

  it('streams raw answers and gives the WebSocket URL with credentials', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: 1\n\n');
    });
    const client = createMasterClient(
      { base, source: 't', local: false },
      { dataDir: tempDir(), env: { RUNNER_TOKEN: 'tok' } },
    );
    const response = await client.request('GET', '/agents/a/logs/stream', { timeoutMs: 0 });
    expect(await response.text()).toBe('data: 1\n\n');
    expect(await client.bytes('/x')).toEqual(new Uint8Array(Buffer.from('data: 1\n\n')));
    expect(await client.webSocket()).toEqual({
      url: `${base.replace('http', 'ws')}/api/v1/ws`,
      headers: { authorization: 'Bearer tok' },
    });
  });
});

describe('findMaster', () => {
  it('prefers the flag, then master.url, then master.json, then master.address through the locator', async () => {
    const dataDir = tempDir();
    expect((await findMaster(context(dataDir), 'http://u:p@flag:1/api/v1')).endpoint).toEqual({
      base: 'http://flag:1',
      source: '--master-url',
      authorization: `Basic ${Buffer.from('u:p').toString('base64')}`,
      local: false,
    });
    expect((await findMaster(context(dataDir, { 'master.url': 'http://conf:2' }))).endpoint?.base).toBe(
      'http://conf:2',
    );
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, 'master.json'), JSON.stringify({ pid: process.pid, http: '0.0.0.0:3' }));
    expect((await findMaster(context(dataDir))).endpoint).toMatchObject({
      base: 'http://127.0.0.1:3',
      local: true,
      pid: process.pid,
    });
    const asked: string[] = [];
    const locator: MasterLocator = {
      describe: async (address) => {
        asked.push(address);
        return { http_port: 4, http_bind_address: '0.0.0.0' };
      },
    };
    const elsewhere = tempDir();
    const found = await findMaster(context(elsewhere, { 'master.address': 'ci-master' }, locator));
    expect(asked).toEqual(['ci-master:50053']);
    expect(found.endpoint).toMatchObject({ base: 'http://ci-master:4', local: false });
  });

  it('says where it looked, and what to do without a locator', async () => {
    const dataDir = tempDir();
    const missing = await connectMaster(context(dataDir)).catch((e: unknown) => e);
    expect((missing as Error).message).toMatch(
      /^no master found: --master-url not given; master.url not set .*master\.json does not exist .*Start one with `runner server`/,
    );
    const noLocator = await findMaster(context(dataDir, { 'master.address': 'm:1' })).catch((e: unknown) => e);
    expect((noLocator as Error).message).toContain('set RUNNER_MASTER_URL instead');
  });
});
