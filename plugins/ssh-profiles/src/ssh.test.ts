// SSH profiles against a real OpenSSH server on loopback (test/support/sshd.ts: Debian's sshd with a
// temporary host key, a throwaway user) through the real HTTP API and store in a temp data directory:
// pinning at first use only when asked, exec with streamed output, SFTP both ways, a changed host
// key refused, the audit log, and the Lua module's checks. Needs root and openssh-server.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { plugin as httpPlugin } from '@runner/plugin-http';
import { HttpRouterRef, SshProfilesRef, type LuaCallContext, type SshProfiles } from '@runner/plugin-sdk';
import { createTestKernel, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as secretsPlugin } from '@runner/plugin-secrets';
import { plugin as storePlugin } from '@runner/plugin-store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sshdAvailable, startSshd, type TestSshd } from '../../../test/support/sshd.js';
import { FORWARDED_BYTES, forwardedActions, serveForwardedSsh } from './forwarded-ssh.js';
import { createSshModule, profileActions } from './lua.js';
import { plugin } from './plugin.js';
import type { SshProfilesService } from './profiles.js';

const canRun = sshdAvailable();
let sshd: TestSshd;
let kernel: TestKernel;
let port = 0;

async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(`http://127.0.0.1:${port}/api/v1${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

beforeAll(async () => {
  if (!canRun) return;
  sshd = await startSshd({ password: true });
  kernel = await createTestKernel({
    plugins: [storePlugin, secretsPlugin, httpPlugin, plugin],
    profile: 'master',
    config: { 'http.port': 0, 'http.bind_address': '127.0.0.1' },
  });
  await kernel.ready();
  port = kernel.get(HttpRouterRef).address()?.port ?? 0;
  const created = await call('POST', '/ssh', {
    name: 'box',
    host: '127.0.0.1',
    port: sshd.port,
    user: sshd.user,
    auth_type: 'key',
    key_path: sshd.clientKey,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
}, 60_000);

afterAll(async () => {
  if (!canRun) return;
  await kernel?.stop();
  await sshd?.stop();
}, 30_000);

describe.skipIf(!canRun)('SSH profiles on a real sshd', () => {
  it('pins the host key only when asked, then tests with it', async () => {
    const refused = await call('POST', '/ssh/box/test', {});
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('host_key_unknown');
    expect(refused.body.error.message).toContain(sshd.hostFingerprint());
    expect((await call('GET', '/ssh/box')).body.host_key).toBeUndefined();

    const trusted = await call('POST', '/ssh/box/test', { trust_host_key: true });
    expect(trusted.status, JSON.stringify(trusted.body)).toBe(200);
    expect(trusted.body).toMatchObject({
      ok: true,
      host_key: { type: 'ssh-ed25519', fingerprint: sshd.hostFingerprint() },
    });
    expect(trusted.body.remote).toMatch(/^Linux /);

    const profile = (await call('GET', '/ssh/box')).body;
    expect(profile).toMatchObject({ connection_count: 1, host_key: { fingerprint: sshd.hostFingerprint() } });
    expect(profile.last_used_at).toMatch(/^\d{4}-/);
    expect(JSON.stringify(profile)).not.toContain('host_key_blob');
    // Without trust, the pinned key is enough from now on.
    expect((await call('POST', '/ssh/box/test', {})).status).toBe(200);
  });

  it('runs commands with streamed output and exit codes, and copies files both ways over SFTP', async () => {
    const profiles = kernel.get(SshProfilesRef);
    const connection = await profiles.connect('box', { actor: 'tester' });
    const streamed: string[] = [];
    const result = await connection.exec('echo one; echo two >&2; exit 3', {
      onStdout: (c) => streamed.push(c.toString()),
    });
    expect(result).toMatchObject({ code: 3, stdout: 'one\n', stderr: 'two\n' });
    expect(streamed.join('')).toBe('one\n');

    const local = mkdtempSync(join(tmpdir(), 'ssh-copy-'));
    const data = Buffer.from(Array.from({ length: 200_000 }, (_, i) => i % 251));
    writeFileSync(join(local, 'up.bin'), data);
    expect(await connection.upload(join(local, 'up.bin'), `${sshd.home}/up.bin`)).toEqual({ bytes: data.length });
    expect(sha256(readFileSync(`${sshd.home}/up.bin`))).toBe(sha256(data));
    expect(await connection.download(`${sshd.home}/up.bin`, join(local, 'down.bin'))).toEqual({ bytes: data.length });
    expect(sha256(readFileSync(join(local, 'down.bin')))).toBe(sha256(data));
    connection.close();
    await new Promise((r) => connection.onClose(() => r(undefined)));

    // Newest first: every action, with its actor and result.
    let audit = (await call('GET', '/ssh/box/audit')).body;
    for (let i = 0; i < 50 && audit.entries[0]?.action !== 'connection_closed'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      audit = (await call('GET', '/ssh/box/audit')).body;
    }
    const mine = audit.entries.filter((e: { actor: string }) => e.actor === 'tester').reverse();
    expect(mine.map((e: { action: string; result?: number | null }) => [e.action, e.result ?? null])).toEqual([
      ['connection_established', null],
      ['command_executed', 3],
      ['file_uploaded', data.length],
      ['file_downloaded', data.length],
      ['connection_closed', null],
    ]);
    expect(mine[1].detail).toBe('echo one; echo two >&2; exit 3');
  });

  it('the Lua module needs the workflows flag, keeps local paths in the working directory and honours dry-run', async () => {
    const profiles = kernel.get(SshProfilesRef) as SshProfiles as SshProfilesService;
    const root = mkdtempSync(join(tmpdir(), 'ssh-lua-'));
    mkdirSync(join(root, 'out'));
    writeFileSync(join(root, 'in.txt'), 'from the workflow\n');
    symlinkSync('/etc', join(root, 'etc-link'));
    const ssh = createSshModule(profileActions(profiles), () => root);
    const lines: string[] = [];
    const logger = { info: (m: string) => lines.push(m), debug() {}, warn() {}, error() {}, child: () => logger };
    const lua = (dryRun = false) =>
      ({
        dryRun,
        logger,
        signal: new AbortController().signal,
        run: { workflow: 'deploy', runId: 'r1', task: 'copy', attempt: 1, agent: 'local' },
      }) as unknown as LuaCallContext;

    await expect(ssh.exec(lua(), 'box', 'true')).rejects.toThrow(/not open to workflows/);
    const body = { host: '127.0.0.1', port: sshd.port, user: sshd.user, auth_type: 'key', key_path: sshd.clientKey };
    expect((await call('PUT', '/ssh/box', { ...body, workflows: true })).status).toBe(200);

    expect(await ssh.exec(lua(), 'box', 'printf hi')).toMatchObject({ changed: true, code: 0, stdout: 'hi' });
    expect(await ssh.upload(lua(), 'box', 'in.txt', `${sshd.home}/in.txt`)).toEqual({ changed: true, bytes: 18 });
    expect(await ssh.download(lua(), 'box', `${sshd.home}/in.txt`, 'out/back.txt')).toEqual({
      changed: true,
      bytes: 18,
    });
    expect(readFileSync(join(root, 'out/back.txt'), 'utf8')).toBe('from the workflow\n');
    for (const escape of ['/etc/shadow', '../x', 'etc-link/shadow'])
      await expect(ssh.upload(lua(), 'box', escape, '/tmp/x')).rejects.toThrow(/working directory/);

    const before = (await call('GET', '/ssh/box')).body.connection_count;
    expect(await ssh.exec(lua(true), 'box', 'rm -rf ~')).toMatchObject({ changed: false });
    expect(lines).toContain('dry-run: would run on SSH profile box: rm -rf ~');
    expect((await call('GET', '/ssh/box')).body.connection_count).toBe(before);
    const actors = (await call('GET', '/ssh/box/audit')).body.entries.map((e: { actor: string }) => e.actor);
    expect(actors).toContain('workflow:deploy/r1/copy');
  });

  it("the executor's module forwards each call; the master checks it as untrusted input, and files stay the executor's", async () => {
    const profiles = kernel.get(SshProfilesRef);
    const serve = serveForwardedSsh(profiles);
    let dryRun = false;
    const asked: unknown[] = [];
    // The channel: structured clone both ways, the caller from the master's record of the task.
    const forwarder = {
      forward: async (module: string, request: unknown, run: { runId: string; task: string }) => {
        asked.push(module);
        const caller = { workflow: 'deploy', runId: run.runId, task: run.task, dryRun };
        return structuredClone(await serve(structuredClone(request), caller, new AbortController().signal));
      },
    };
    const root = mkdtempSync(join(tmpdir(), 'ssh-fwd-'));
    const data = Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 7) % 256));
    writeFileSync(join(root, 'up.bin'), data);
    const ssh = createSshModule(forwardedActions(forwarder), () => root);
    const logger = { info() {}, debug() {}, warn() {}, error() {}, child: () => logger };
    const lua = {
      dryRun: false,
      logger,
      signal: new AbortController().signal,
      run: { workflow: 'deploy', runId: 'r2', task: 'fwd', attempt: 1, agent: 'local' },
    } as unknown as LuaCallContext;

    expect(await ssh.exec(lua, 'box', 'printf hi')).toMatchObject({ changed: true, code: 0, stdout: 'hi' });
    const remote = `${sshd.home}/fwd.bin`;
    expect(await ssh.upload(lua, 'box', 'up.bin', remote, { mode: '0640' })).toEqual({ changed: true, bytes: 100_000 });
    expect(sha256(readFileSync(remote))).toBe(sha256(data));
    expect(await ssh.download(lua, 'box', remote, 'down.bin')).toEqual({ changed: true, bytes: 100_000 });
    expect(sha256(readFileSync(join(root, 'down.bin')))).toBe(sha256(data));
    expect(asked).toEqual(['ssh', 'ssh', 'ssh']);

    // Past the bound, refused before the file is read (a sparse file: nothing is written).
    writeFileSync(join(root, 'huge.bin'), '');
    truncateSync(join(root, 'huge.bin'), FORWARDED_BYTES + 1);
    await expect(ssh.upload(lua, 'box', 'huge.bin', remote)).rejects.toMatchObject({ code: 'too_large' });
    // What a run in dry-run or a forged request asks, the master refuses on its own.
    dryRun = true;
    await expect(ssh.exec(lua, 'box', 'true')).rejects.toThrow(/dry-run, nothing connects/);
    const caller = { workflow: 'deploy', runId: 'r2', task: 'fwd', dryRun: false };
    const signal = new AbortController().signal;
    await expect(serve({ fn: 'upload', profile: 'box', remote, data: 'x' }, caller, signal)).rejects.toThrow(
      /without a valid content/,
    );
    await expect(serve({ fn: 'shell', profile: 'box' }, caller, signal)).rejects.toThrow(/without a valid function/);
    const actors = (await call('GET', '/ssh/box/audit')).body.entries.map((e: { actor: string }) => e.actor);
    expect(actors.filter((a: string) => a === 'workflow:deploy/r2/fwd').length).toBeGreaterThanOrEqual(6);
  });

  it('authenticates with a password kept by the secrets service, never shown', async () => {
    const created = await call('POST', '/ssh', {
      name: 'pw',
      host: '127.0.0.1',
      port: sshd.port,
      user: sshd.user,
      auth_type: 'password',
      password: sshd.password,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ auth_type: 'password', has_secret: true });
    const tested = await call('POST', '/ssh/pw/test', { trust_host_key: true });
    expect(tested.status, JSON.stringify(tested.body)).toBe(200);
    expect(sshd.log()).toMatch(new RegExp(`Accepted password for ${sshd.user}`));
    for (const path of ['/ssh', '/ssh/pw', '/ssh/pw/audit'])
      expect(JSON.stringify((await call('GET', path)).body)).not.toContain(sshd.password);
    // Removing the profile removes its credential from the secrets service.
    expect((await call('DELETE', '/ssh/pw')).status).toBe(204);
    const { SecretsRef } = await import('@runner/plugin-sdk');
    expect(await kernel.get(SecretsRef).list('ssh-profile:pw')).toEqual([]);
  });

  it('refuses a changed host key, naming both fingerprints, and keeps the pinned one', async () => {
    const pinned = sshd.hostFingerprint();
    await sshd.changeHostKey();
    const refused = await call('POST', '/ssh/box/test', { trust_host_key: true });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('host_key_mismatch');
    expect(refused.body.error.message).toContain(`it offered ssh-ed25519 ${sshd.hostFingerprint()}`);
    expect(refused.body.error.message).toContain(`pinned ssh-ed25519 ${pinned}`);
    expect((await call('GET', '/ssh/box')).body.host_key.fingerprint).toBe(pinned);
    // Refused before authenticating: sshd saw no second login for this key.
    const audit = (await call('GET', '/ssh/box/audit')).body.entries;
    expect(audit[0]).toMatchObject({ action: 'connection_failed' });
    expect(audit[0].detail).toContain('HOST KEY MISMATCH');
  });
});
