// Authentication, roles and audit as a user meets them: a real `runner server` on loopback, curl
// and the runner CLI as separate processes, real files in a temporary data directory.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { hasTool } from '../support/tools.js';
import { localAuth, runRunner, spawnRunner, stopAll, tempDataDir, waitForOutput } from './helpers.js';

const children: ReturnType<typeof spawnRunner>[] = [];
let dataDir: string;
let base: string;
let adminPassword: string;

beforeAll(async () => {
  dataDir = tempDataDir('runner-auth-');
  // No --bind-address: the defaults are what is tested.
  const child = spawnRunner(['server', '--http-port', '0', '--port', '0'], { env: { RUNNER_DATA_DIR: dataDir } });
  children.push(child);
  const [, address] = await waitForOutput(child, /REST API listening on (127\.0\.0\.1:\d+)/);
  base = `http://${address}`;
  const [, file] = await waitForOutput(child, /its password is in (\S+) /);
  adminPassword = readFileSync(file, 'utf8').trim();
}, 30_000);

afterAll(() => {
  stopAll(children, 'SIGTERM');
});

/** curl as a separate process: status code and body. */
function curl(args: string[]): { status: number; body: string } {
  const out = execFileSync('curl', ['-s', '-w', '\n%{http_code}', ...args], { encoding: 'utf8' });
  const at = out.lastIndexOf('\n');
  return { status: Number(out.slice(at + 1)), body: out.slice(0, at) };
}

const cli = (args: string[], env: Record<string, string> = {}) =>
  runRunner(args, { env: { RUNNER_DATA_DIR: dataDir, ...env } });

interface OpenApi {
  paths: Record<string, Record<string, { 'x-permission': string }>>;
}

describe('a master with default settings', () => {
  it('keeps its credentials files 0600 in a 0700 directory and says where the admin password is', () => {
    expect(statSync(join(dataDir, 'auth')).mode & 0o777).toBe(0o700);
    for (const file of ['admin.password', 'local.token', 'jwt.secret']) {
      expect(statSync(join(dataDir, 'auth', file)).mode & 0o777).toBe(0o600);
    }
    expect(adminPassword.length).toBeGreaterThanOrEqual(20);
  });

  it('creates the store, the log and its own files 0600 in 0700 directories', () => {
    const mode = (path: string) => statSync(path).mode & 0o777;
    for (const dir of ['', 'store', 'logs']) expect(mode(join(dataDir, dir)), dir || 'data dir').toBe(0o700);
    const files = ['master.json', 'runner.lock', 'logs/runner.log'];
    for (const name of readdirSync(join(dataDir, 'store'))) files.push(join('store', name));
    for (const file of files) expect(mode(join(dataDir, file)), file).toBe(0o600);
  });

  it.skipIf(!hasTool('ss', 'iproute2'))('listens on loopback only (HTTP and gRPC)', () => {
    const pid = children[0].pid;
    const listeners = execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes(`pid=${pid},`))
      .map((line) => line.trim().split(/\s+/)[3]);
    expect(listeners.length).toBe(2);
    for (const address of listeners) expect(address).toMatch(/^(127\.0\.0\.1|\[::1\]):\d+$/);
  });

  it('answers 401 without credentials on every route of its OpenAPI document except health, login, the providers list, the document and the signed GitOps webhook', async () => {
    const doc = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as OpenApi;
    const open: string[] = [];
    const checked: string[] = [];
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const route = `${method.toUpperCase()} ${path}`;
        if (operation['x-permission'] === 'public') {
          open.push(route);
          continue;
        }
        const url = `${base}${path.replace(/\{[^}]+\}/g, 'x')}`;
        const body = ['post', 'put', 'patch'].includes(method) ? '{}' : undefined;
        const response = await fetch(url, {
          method: method.toUpperCase(),
          body,
          headers: body ? { 'content-type': 'application/json' } : {},
        });
        expect(response.status, route).toBe(401);
        expect(((await response.json()) as { error: { code: string } }).error.code, route).toBe('unauthorized');
        checked.push(route);
      }
    }
    // The OIDC login and callback are declared whether or not a provider is configured (the build
    // writes the document without a master); they answer 404 for a provider that is not.
    expect(open.sort()).toEqual([
      'GET /api/v1/auth/oidc/{provider}/callback',
      'GET /api/v1/auth/oidc/{provider}/login',
      'GET /api/v1/auth/providers',
      'GET /api/v1/health',
      'GET /api/v1/openapi.json',
      'POST /api/v1/auth/login',
      // Authenticated by its shared secret's HMAC signature, not by a login (the gitops plugin).
      'POST /api/v1/gitops/webhook',
    ]);
    expect(checked.length).toBeGreaterThan(20);
  });

  it('refuses an unauthenticated WebSocket upgrade and accepts one with a credential', async () => {
    const url = `${base.replace('http', 'ws')}/api/v1/ws`;
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(url);
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
      ws.on('error', () => undefined);
    });
    expect(refused).toBe(401);
    const ws = new WebSocket(url, { headers: localAuth(dataDir) });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    ws.close();
  });
});

describe('credentials from curl', () => {
  it('HTTP Basic', () => {
    expect(curl(['-u', `admin:${adminPassword}`, `${base}/api/v1/users`]).status).toBe(200);
    const wrong = curl(['-u', 'admin:wrong-password', `${base}/api/v1/users`]);
    const nobody = curl(['-u', 'nobody:wrong-password', `${base}/api/v1/users`]);
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.body).error.message).toBe(JSON.parse(nobody.body).error.message);
  });

  it('a session token from POST /auth/login, until POST /auth/logout revokes it', () => {
    const login = curl([
      '-X',
      'POST',
      '-H',
      'content-type: application/json',
      '-d',
      JSON.stringify({ username: 'admin', password: adminPassword }),
      '-D',
      '-',
      `${base}/api/v1/auth/login`,
    ]);
    expect(login.status).toBe(200);
    expect(login.body).toMatch(/set-cookie: runner_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict/i);
    const token = (JSON.parse(login.body.slice(login.body.indexOf('{'))) as { token: string }).token;
    const auth = ['-H', `authorization: Bearer ${token}`];
    expect(JSON.parse(curl([...auth, `${base}/api/v1/auth/me`]).body)).toMatchObject({ name: 'admin', method: 'jwt' });
    expect(curl([...auth, '-X', 'POST', `${base}/api/v1/auth/logout`]).status).toBe(200);
    expect(curl([...auth, `${base}/api/v1/auth/me`]).status).toBe(401);
  });

  it('an API token made with `runner auth token create`, until it is revoked', async () => {
    const created = await cli(['auth', 'token', 'create', '--name', 'ci', '--role', 'operator', '--expires', '90d']);
    expect(created.code, created.stderr).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^rnr_/);
    const auth = ['-H', `authorization: Bearer ${token}`];
    expect(JSON.parse(curl([...auth, `${base}/api/v1/auth/me`]).body)).toMatchObject({ name: 'ci', role: 'operator' });
    expect(curl([...auth, `${base}/api/v1/users`]).status).toBe(403);
    const listed = await cli(['auth', 'token', 'list']);
    expect(listed.stdout).toMatch(/^ci\s+operator\s+local\s/m);
    expect(listed.stdout).not.toContain(token);
    expect((await cli(['auth', 'token', 'revoke', 'ci'])).code).toBe(0);
    expect(curl([...auth, `${base}/api/v1/auth/me`]).status).toBe(401);
  });
});

describe('the CLI', () => {
  it('works on the master’s host without a login (local credential), and remotely with runner login or RUNNER_TOKEN', async () => {
    expect((await cli(['auth', 'whoami'])).stdout).toContain('local (admin, by local)');
    // Another data directory is another host: no local credential there.
    const elsewhere = tempDataDir('runner-auth-remote-');
    const remote = (args: string[], env: Record<string, string> = {}) =>
      runRunner([...args, '--master-url', base], { env: { RUNNER_DATA_DIR: elsewhere, ...env } });
    const anonymous = await remote(['auth', 'whoami']);
    expect(anonymous.code).not.toBe(0);
    expect(anonymous.stderr).toContain('authentication required');
    const passwordFile = join(elsewhere, 'pw');
    writeFileSync(passwordFile, `${adminPassword}\n`);
    const login = await remote(['login', '--username', 'admin', '--password-file', passwordFile]);
    expect(login.code, login.stderr).toBe(0);
    expect(statSync(join(elsewhere, 'auth', 'logins.json')).mode & 0o777).toBe(0o600);
    expect((await remote(['auth', 'whoami'])).stdout).toContain('admin (admin, by jwt)');
    expect((await remote(['logout'])).code).toBe(0);
    expect((await remote(['auth', 'whoami'])).code).not.toBe(0);
    const token = (await cli(['auth', 'token', 'create', '--name', 'remote', '--role', 'viewer'])).stdout.trim();
    expect((await remote(['auth', 'whoami'], { RUNNER_TOKEN: token })).stdout).toContain('remote (viewer, by token)');
  });

  it('manages users and their roles, and the audit log shows what happened', async () => {
    const file = join(dataDir, 'dev-pw');
    writeFileSync(file, 'developer-password\n');
    expect((await cli(['user', 'add', 'dana', '--role', 'developer', '--password-file', file])).code).toBe(0);
    expect((await cli(['user', 'role', 'dana', 'viewer'])).stdout).toContain('dana is now viewer');
    const generated = await cli(['user', 'passwd', 'dana', '--generate-password']);
    const password = /password \(shown once\): (\S+)/.exec(generated.stdout)?.[1];
    expect(password).toBeDefined();
    expect(curl(['-u', `dana:${password}`, `${base}/api/v1/auth/me`]).status).toBe(200);
    expect((await cli(['user', 'list'])).stdout).toMatch(/^dana\s+viewer/m);
    const lastAdmin = await cli(['user', 'remove', 'admin']);
    expect(lastAdmin.code).not.toBe(0);
    expect(lastAdmin.stderr).toContain('last admin');
    expect((await cli(['user', 'remove', 'dana'])).code).toBe(0);
    const audit = await cli(['audit', 'list', '--output', 'json', '--limit', '1000']);
    const events = (JSON.parse(audit.stdout) as { records: { event: string; user: string }[] }).records;
    const seen = new Set(events.map((r) => `${r.event} ${r.user}`));
    for (const expected of [
      'user.add local',
      'user.role local',
      'user.remove local',
      'auth.login admin',
      'auth.logout admin',
      'token.create local',
    ]) {
      expect(seen, expected).toContain(expected);
    }
    expect(audit.stdout).not.toContain(adminPassword);
    expect(audit.stdout).not.toContain('developer-password');
  });
});

describe('runner audit list --follow', () => {
  it('prints records as they are written', async () => {
    const follow = spawnRunner(['audit', 'list', '--follow', '--output', 'json', '--limit', '1'], {
      env: { RUNNER_DATA_DIR: dataDir },
    });
    children.push(follow);
    await waitForOutput(follow, /"event"/);
    const file = join(dataDir, 'follow-pw');
    writeFileSync(file, 'follow-password\n');
    expect((await cli(['user', 'add', 'fiona', '--role', 'viewer', '--password-file', file])).code).toBe(0);
    await waitForOutput(follow, /"event":"user\.add".*fiona/, 10_000);
    follow.kill('SIGINT');
  });
});

describe('roles', () => {
  // What each role may do (service.md section 5 and the table in plugin-sdk/src/permissions.ts).
  // "yes" means the guards let the call through (the handler may still answer 400 or 404).
  const table: [string, string, { admin: boolean; operator: boolean; developer: boolean; viewer: boolean }][] = [
    ['GET', '/executions', { admin: true, operator: true, developer: true, viewer: true }],
    ['POST', '/workflows/run', { admin: true, operator: true, developer: true, viewer: false }],
    ['GET', '/agents', { admin: true, operator: true, developer: true, viewer: true }],
    ['GET', '/agents/x/logs/stream', { admin: true, operator: true, developer: true, viewer: true }],
    ['POST', '/agents/x/restart', { admin: true, operator: true, developer: false, viewer: false }],
    // A shell command on an agent, stopping one and managing groups are Admin's (issue 18 item 3).
    ['POST', '/agents/x/exec', { admin: true, operator: false, developer: false, viewer: false }],
    ['POST', '/agents/x/stop', { admin: true, operator: false, developer: false, viewer: false }],
    ['DELETE', '/agents/x', { admin: true, operator: false, developer: false, viewer: false }],
    ['GET', '/agent-groups', { admin: true, operator: true, developer: true, viewer: true }],
    ['POST', '/agent-groups', { admin: true, operator: false, developer: false, viewer: false }],
    ['DELETE', '/agent-groups/x', { admin: true, operator: false, developer: false, viewer: false }],
    ['GET', '/auth/roles', { admin: true, operator: true, developer: true, viewer: true }],
    ['GET', '/db/stats', { admin: true, operator: false, developer: false, viewer: false }],
    ['GET', '/users', { admin: true, operator: false, developer: false, viewer: false }],
    ['POST', '/auth/tokens', { admin: true, operator: false, developer: false, viewer: false }],
    ['GET', '/audit', { admin: true, operator: false, developer: false, viewer: false }],
    ['GET', '/auth/me', { admin: true, operator: true, developer: true, viewer: true }],
  ];

  it('each role reaches the routes of its table and gets 403 naming the permission on the others', async () => {
    const tokens: Record<string, string> = {};
    for (const role of ['admin', 'operator', 'developer', 'viewer']) {
      const created = await fetch(`${base}/api/v1/auth/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...localAuth(dataDir) },
        body: JSON.stringify({ name: `role-${role}`, role }),
      });
      tokens[role] = ((await created.json()) as { token: string }).token;
    }
    const mismatches: string[] = [];
    for (const [method, path, allowed] of table) {
      for (const [role, expected] of Object.entries(allowed)) {
        const response = await fetch(`${base}/api/v1${path}`, {
          method,
          headers: { authorization: `Bearer ${tokens[role]}`, 'content-type': 'application/json' },
          body: method === 'POST' ? '{}' : undefined,
          signal: AbortSignal.timeout(5000),
        });
        const body = await response.text();
        const passed = response.status !== 401 && response.status !== 403;
        if (passed !== expected) mismatches.push(`${role} ${method} ${path}: ${response.status} ${body.slice(0, 120)}`);
        if (!expected && response.status === 403) expect(body).toMatch(/lacks the permission [a-z]+:[a-z]+/);
        await response.body?.cancel().catch(() => undefined);
      }
    }
    expect(mismatches).toEqual([]);
  });
});
