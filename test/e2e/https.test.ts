// A master serving HTTPS as an operator starts it (`runner server --tls-cert --tls-key`, a
// self-signed certificate made by openssl): curl and the CLI reach it when they trust the
// certificate and fail with a clear message when they do not, plain HTTP on the port fails, the
// WebSocket and server-sent events work over TLS, gRPC uses the same certificate, and the UI loads.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  localAuth,
  localToken,
  runRunner,
  selfSignedCert,
  spawnRunner,
  tempDataDir,
  waitForOutput,
} from './helpers.js';
import { launch, watch } from './ui/browser.js';

type Child = ReturnType<typeof spawnRunner>;

let master: Child;
let dataDir: string;
let cert: string;
let base: string;
let port: string;

beforeAll(async () => {
  dataDir = tempDataDir('runner-e2e-https-');
  const pair = selfSignedCert(dataDir, 'master');
  cert = pair.cert;
  master = spawnRunner(
    ['server', '--http-port', '0', '--port', '0', '--tls-cert', cert, '--tls-key', pair.key, '--data-dir', dataDir],
    // Debug: every request is a log line, which the server-sent events test follows.
    { env: { RUNNER_DATA_DIR: dataDir, RUNNER_DEBUG: '1' } },
  );
  [, port] = await waitForOutput(
    master,
    /REST API listening on 127\.0\.0\.1:(\d+) \(https:\/\/127\.0\.0\.1:\d+\/api\/v1\)/,
  );
  base = `https://127.0.0.1:${port}`;
}, 30_000);

afterAll(() => {
  if (master.exitCode === null) master.kill('SIGKILL');
});

function curl(args: string[]): { status: number; body: string; stderr: string; exit: number } {
  const result = spawnSync('curl', ['-sS', '-o', '-', '-w', '\n%{http_code}', ...args], { encoding: 'utf8' });
  const lines = result.stdout.split('\n');
  return { status: Number(lines.pop()), body: lines.join('\n'), stderr: result.stderr, exit: result.status ?? -1 };
}

describe('HTTPS on the REST API', () => {
  it('answers curl that trusts the certificate, and refuses one that does not', () => {
    const health = curl(['--cacert', cert, `${base}/api/v1/health`]);
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toMatchObject({ status: 'ok' });
    const agents = curl([
      '--cacert',
      cert,
      '-H',
      `authorization: ${localAuth(dataDir).authorization}`,
      `${base}/api/v1/agents`,
    ]);
    expect(agents.status).toBe(200);
    // The session cookie of a login over HTTPS is never sent back in clear.
    const password = readFileSync(join(dataDir, 'auth', 'admin.password'), 'utf8').trim();
    const headers = spawnSync(
      'curl',
      [
        '-sS',
        '-D',
        '-',
        '-o',
        '/dev/null',
        '--cacert',
        cert,
        '-H',
        'content-type: application/json',
        '--data',
        JSON.stringify({ username: 'admin', password }),
        `${base}/api/v1/auth/login`,
      ],
      { encoding: 'utf8' },
    ).stdout;
    expect(headers).toMatch(
      /^set-cookie: runner_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure\r?$/im,
    );
    // Under TLS every answer tells browsers to come back over HTTPS only; login answers are not cached.
    expect(headers).toMatch(/^strict-transport-security: max-age=31536000\r?$/im);
    expect(headers).toMatch(/^cache-control: no-store\r?$/im);
    const untrusted = curl([`${base}/api/v1/health`]);
    expect(untrusted.exit).toBe(60); // curl: peer certificate cannot be authenticated
  });

  it('fails plain HTTP on the TLS port cleanly, and keeps serving HTTPS', async () => {
    const plain = await fetch(`http://127.0.0.1:${port}/api/v1/health`).catch((e: Error) => e);
    expect(plain).toBeInstanceOf(Error);
    const cli = await runRunner(['agent', 'list', '--master-url', `http://127.0.0.1:${port}`], {
      env: { RUNNER_DATA_DIR: tempDataDir(), RUNNER_TOKEN: localToken(dataDir) },
    });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/if it serves HTTPS \(runner server --tls-cert\), use an https:\/\/ URL/);
    expect(curl(['--cacert', cert, `${base}/api/v1/health`]).status).toBe(200);
  });

  it('the local CLI finds the master in master.json and trusts the certificate it names', async () => {
    const info = JSON.parse(readFileSync(join(dataDir, 'master.json'), 'utf8')) as { tls_cert?: string };
    expect(info.tls_cert).toBe(cert);
    const local = await runRunner(['agent', 'list', '--output', 'json'], { env: { RUNNER_DATA_DIR: dataDir } });
    expect(local.stderr).toBe('');
    expect(local.code).toBe(0);
    expect(JSON.parse(local.stdout)).toMatchObject({ agents: [], total: 0 });
    const doctor = await runRunner(['doctor'], { env: { RUNNER_DATA_DIR: dataDir } });
    expect(doctor.stdout).toMatch(new RegExp(`answers at https://127\\.0\\.0\\.1:${port}`));
  });

  it('a remote CLI trusts the master through --ca or RUNNER_CA, and says what to do without', async () => {
    const env = { RUNNER_DATA_DIR: tempDataDir(), RUNNER_TOKEN: localToken(dataDir) };
    // localhost, a name the certificate holds: verified as any TLS client would.
    const url = `https://localhost:${port}`;
    const withFlag = await runRunner(['--ca', cert, 'agent', 'list', '--master-url', url], { env });
    expect(withFlag.stderr).toBe('');
    expect(withFlag.code).toBe(0);
    const withEnv = await runRunner(['agent', 'list', '--master-url', url], { env: { ...env, RUNNER_CA: cert } });
    expect(withEnv.code).toBe(0);
    const without = await runRunner(['agent', 'list', '--master-url', url], { env });
    expect(without.code).toBe(1);
    expect(without.stderr).toMatch(
      /DEPTH_ZERO_SELF_SIGNED_CERT: its certificate is not trusted by the system roots .*--ca <file> or RUNNER_CA/,
    );
    // By the gRPC address alone (RUNNER_MASTER_ADDR): Describe says the REST API is HTTPS.
    const grpc = /gRPC listening on (127\.0\.0\.1:\d+)/.exec(master.output.stdout + master.output.stderr)?.[1] ?? '';
    const byGrpc = await runRunner(['agent', 'list'], {
      env: { ...env, RUNNER_MASTER_ADDR: grpc, RUNNER_MASTER_TLS_CERT: cert },
    });
    expect(byGrpc.stderr).toBe('');
    expect(byGrpc.code).toBe(0);
    // Another certificate is no better than none.
    const other = selfSignedCert(tempDataDir(), 'other');
    const wrong = await runRunner(['--ca', other.cert, 'agent', 'list', '--master-url', url], { env });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/its certificate is not trusted by .*other\.pem \(from master\.tls_cert/);
  });

  it('carries the WebSocket (wss) and server-sent events (runner logs --follow)', async () => {
    const url = `wss://127.0.0.1:${port}/api/v1/ws`;
    const ca = readFileSync(cert);
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(url, { ca });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
      ws.on('error', () => resolve(-1));
    });
    expect(refused).toBe(401);
    const ws = new WebSocket(url, { ca, headers: localAuth(dataDir) });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    ws.close();

    const follow = spawnRunner(['logs', '--follow', '--level', 'debug', '--limit', '1'], {
      env: { RUNNER_DATA_DIR: dataDir },
    });
    try {
      // Each request is a debug line; asked until the stream, once open, carries one.
      const marker = `https-sse-${Date.now()}`;
      const ask = setInterval(
        () => execFile('curl', ['-s', '--cacert', cert, `${base}/api/v1/${marker}`], () => {}),
        300,
      );
      try {
        await waitForOutput(follow, new RegExp(`http request .*${marker}`));
      } finally {
        clearInterval(ask);
      }
    } finally {
      follow.kill('SIGTERM');
    }
  });

  it('serves gRPC to agents with the same certificate', () => {
    const grpc = /agents: gRPC listening on (127\.0\.0\.1:\d+) \(TLS\)/.exec(
      master.output.stdout + master.output.stderr,
    );
    expect(grpc).not.toBeNull();
    const handshake = execFileSync(
      'openssl',
      ['s_client', '-connect', grpc?.[1] ?? '', '-CAfile', cert, '-alpn', 'h2'],
      { input: '', encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] },
    );
    expect(handshake).toMatch(/Verify return code: 0 \(ok\)/);
  });

  it('the web UI loads over HTTPS in Chromium', async () => {
    const browser = await launch();
    try {
      // The browser is told to accept this test certificate; trust itself is what curl and the CLI check above.
      const ctx = await browser.newContext({ baseURL: base, ignoreHTTPSErrors: true });
      const page = await ctx.newPage();
      const { problems } = watch(page);
      await page.goto('/login');
      await page.getByLabel('User name').waitFor();
      expect(page.url()).toBe(`${base}/login`);
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 30_000);
});
