// The secrets service on the real embedded store in a temp data directory and the real API on a
// loopback port: sealing, the key file's modes, rotation (all or nothing), a store that moved
// without its key, and answers that hold names only.
import { mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { plugin as httpPlugin } from '@runner/plugin-http';
import { HttpRouterRef, SecretsRef, StoreRef } from '@runner/plugin-sdk';
import { createTestKernel, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as storePlugin } from '@runner/plugin-store';
import { afterEach, describe, expect, it } from 'vitest';
import { plugin } from './plugin.js';
import { KeySource } from './key-source.js';
import { newKey, open, seal } from './sealing.js';
import type { SecretStore } from './secret-store.js';

const kernels: TestKernel[] = [];
afterEach(async () => {
  for (const k of kernels.splice(0)) await k.stop();
});

async function start(dataDir?: string, config: Record<string, unknown> = {}) {
  const kernel = await createTestKernel({
    plugins: [storePlugin, httpPlugin, plugin],
    profile: 'master',
    dataDir,
    config: { 'http.port': 0, 'http.bind_address': '127.0.0.1', ...config },
  });
  kernels.push(kernel);
  await kernel.ready();
  const port = kernel.get(HttpRouterRef).address()?.port;
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`http://127.0.0.1:${port}/api/v1${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, text, body: text ? JSON.parse(text) : undefined };
  };
  return { kernel, call, secrets: kernel.get(SecretsRef) as SecretStore, dataDir: kernel.config.dataDir };
}

/** Every byte of every file under `dir`, as latin1 text to search. */
async function allBytes(dir: string): Promise<string> {
  let text = '';
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) text += (await readFile(join(entry.parentPath, entry.name))).toString('latin1');
  }
  return text;
}

describe('sealing', () => {
  it('opens only under the key and the scope/name it was sealed with', () => {
    const key = newKey();
    const sealed = seal(key, 'prod/db_password', 'hunter2-x');
    expect(sealed).not.toContain('hunter2');
    expect(open(key, 'prod/db_password', sealed)).toBe('hunter2-x');
    expect(seal(key, 'prod/db_password', 'hunter2-x')).not.toBe(sealed); // a fresh nonce each time
    expect(() => open(key, 'staging/db_password', sealed)).toThrow(/does not authenticate/);
    expect(() => open(newKey(), 'prod/db_password', sealed)).toThrow(/does not authenticate/);
    const [format, iv, tag, body] = sealed.split('.');
    const flipped = `${format}.${iv}.${tag}.${body.slice(0, -2)}${body.endsWith('A') ? 'B' : 'A'}${body.slice(-1)}`;
    expect(() => open(key, 'prod/db_password', flipped)).toThrow(/does not authenticate/);
  });
});

describe('secrets service', () => {
  it('keeps the key in a 0600 file of a 0700 directory and only ciphertext in the store', async () => {
    const { secrets, kernel, dataDir } = await start();
    await secrets.put('prod', 'db_password', 'Plain-Text-Value-1', 'alice');
    await secrets.put('ssh-profile:web', 'password', 'Plain-Text-Value-2');
    expect(await secrets.reveal('prod', 'db_password')).toBe('Plain-Text-Value-1');
    expect(await secrets.revealAll('prod')).toEqual({ db_password: 'Plain-Text-Value-1' });
    expect(await secrets.list('prod')).toEqual([
      { name: 'db_password', updated_at: expect.stringMatching(/^\d{4}-/), updated_by: 'alice' },
    ]);
    await expect(secrets.reveal('prod', 'db_passwrd')).rejects.toThrow(
      'secret db_passwrd does not exist in prod (did you mean "db_password"?)',
    );
    const keyFile = join(dataDir, 'secrets', 'master.key');
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dataDir, 'secrets'))).mode & 0o777).toBe(0o700);

    const backup = join(await mkdtemp(join(tmpdir(), 'secrets-backup-')), 'b.db');
    await kernel.get(StoreRef).backup(backup);
    await kernel.stop();
    kernels.splice(kernels.indexOf(kernel), 1);
    const key = await readFile(keyFile, 'utf8');
    const store = (await allBytes(dataDir)).replace(key, '');
    const backupBytes = (await readFile(backup)).toString('latin1');
    for (const text of [store, backupBytes]) {
      expect(text).toContain('db_password'); // the names are there, so the search reads the right bytes
      expect(text).not.toContain('Plain-Text-Value');
    }
  });

  it('rotates every scope under a new key, and changes nothing when one value cannot be opened', async () => {
    const { secrets, kernel, dataDir } = await start();
    await secrets.put('prod', 'a_one', 'value-one-1');
    await secrets.put('staging', 'b_two', 'value-two-2');
    await secrets.put('ssh-profile:x', 'key', 'value-three-3');
    const keyFile = join(dataDir, 'secrets', 'master.key');
    const before = await readFile(keyFile, 'utf8');

    const rotated = await secrets.rotateKey();
    expect(rotated.rotated).toBe(3);
    expect(rotated.key_id).not.toBe(rotated.previous_key_id);
    const after = await readFile(keyFile, 'utf8');
    expect(after).not.toBe(before);
    expect(await secrets.reveal('ssh-profile:x', 'key')).toBe('value-three-3');
    const ids = await kernel.get(StoreRef).all<{ key_id: string }>('SELECT DISTINCT key_id FROM secrets');
    expect(ids).toEqual([{ key_id: rotated.key_id }]);

    // One value sealed under a key nobody holds: the rotation stops and nothing changed.
    await kernel.get(StoreRef).run("UPDATE secrets SET key_id = 'lost' WHERE name = 'b_two'");
    await expect(secrets.rotateKey()).rejects.toThrow(/secret b_two of staging sealed under key lost cannot be opened/);
    expect(await readFile(keyFile, 'utf8')).toBe(after);
    expect((await readdir(join(dataDir, 'secrets'))).sort()).toEqual(['master.key']);
    expect(await secrets.reveal('prod', 'a_one')).toBe('value-one-1');
    const kept = await kernel.get(StoreRef).all<{ key_id: string }>('SELECT key_id FROM secrets ORDER BY name');
    expect(kept.map((row) => row.key_id)).toEqual([rotated.key_id, 'lost', rotated.key_id]);
  });

  it('finishes a rotation a stop interrupted after its commit, and forgets one before it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'secrets-key-'));
    const file = join(dir, 'master.key');
    const source = new KeySource({ file });
    const current = await source.sealingKey();
    const next = await source.prepareRotation();
    const reloaded = new KeySource({ file });
    await reloaded.load();
    expect(reloaded.keys().map((k) => k.id)).toEqual([current.id, next.id]);
    expect(await reloaded.settleRotation(new Set([next.id]))).toBe('finished');
    expect(reloaded.keys().map((k) => k.id)).toEqual([next.id]);
    expect((await readdir(dir)).sort()).toEqual(['master.key']);

    await reloaded.prepareRotation();
    const again = new KeySource({ file });
    await again.load();
    expect(await again.settleRotation(new Set([next.id]))).toBe('abandoned');
    expect(again.keys().map((k) => k.id)).toEqual([next.id]);
  });

  it('says at start and at use that a store moved without its key cannot open its secrets', async () => {
    const first = await start();
    await first.secrets.put('prod', 'api_key', 'value-moved-1');
    await first.kernel.stop();
    kernels.splice(0);
    // The same store, another key: the operator names a key file that is not the one that sealed them.
    const other = join(await mkdtemp(join(tmpdir(), 'secrets-other-')), 'other.key');
    await writeFile(other, `${newKey().bytes.toString('base64')}\n`, { mode: 0o600 });
    const second = await start(first.dataDir, { 'secrets.key_file': other });
    const logged = second.kernel.logs.find((line) => line.level === 'error');
    expect(logged?.message).toMatch(
      /^1 secret\(s\) sealed under key [0-9a-f]{16} cannot be opened: key file .*other\.key holds key/,
    );
    expect(logged?.message).toContain('restored or copied without its key');
    await expect(second.secrets.reveal('prod', 'api_key')).rejects.toThrow(/secret api_key of prod sealed under key/);
  });

  it('takes the key from an environment variable the operator names, and refuses to rotate it', async () => {
    const key = newKey();
    const source = new KeySource(
      { file: '/nonexistent/never-written', env: 'MY_KEY' },
      { MY_KEY: key.bytes.toString('base64') },
    );
    expect((await source.sealingKey()).id).toBe(key.id);
    await expect(source.prepareRotation()).rejects.toThrow(/comes from environment variable MY_KEY/);
    const unset = new KeySource({ file: '/nonexistent/x', env: 'MY_KEY' }, {});
    await expect(unset.sealingKey()).rejects.toThrow(
      'no secrets key: environment variable MY_KEY (secrets.key_env) is not set',
    );
  });
});

describe('/api/v1/secrets', () => {
  it('takes values in and gives names, times and users out, never a value', async () => {
    const { call } = await start();
    const put = await call('PUT', '/secrets/prod/db_password', { value: 'Api-Value-Secret-9' });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ stack: 'prod', name: 'db_password', updated_at: expect.any(String), created: true });
    expect((await call('PUT', '/secrets/prod/db_password', { value: 'Api-Value-Secret-10' })).body.created).toBe(false);
    const listed = await call('GET', '/secrets/prod');
    expect(listed.body).toEqual({
      stack: 'prod',
      secrets: [{ name: 'db_password', updated_at: expect.any(String), updated_by: 'anonymous', used_by: [] }],
      total: 1,
    });
    expect(listed.text).not.toContain('Api-Value');
    expect((await call('PUT', '/secrets/prod/2bad', { value: 'x' })).body.error.message).toMatch(/secret name "2bad"/);
    expect((await call('PUT', '/secrets/prod/empty', {})).status).toBe(400);
    expect((await call('PUT', '/secrets/ssh-profile:web/password', { value: 'x' })).body.error.message).toMatch(
      /scope another plugin owns/,
    );
    const missing = await call('DELETE', '/secrets/prod/db_pasword');
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain('did you mean "db_password"');
    expect((await call('DELETE', '/secrets/prod/db_password')).status).toBe(204);
    expect((await call('GET', '/secrets/prod')).body.total).toBe(0);
  });
});
