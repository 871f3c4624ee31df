import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeLogin } from '@runner/plugin-sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConnectionStore, EMBEDDED, normalizeMasterUrl } from './connections.js';
import { fakeElectron } from './fake-electron.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'runner-desktop-conn-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('normalizeMasterUrl', () => {
  it('keeps origin and path, drops /api/v1 and trailing slashes', () => {
    expect(normalizeMasterUrl(' https://Master.example:8443/api/v1/ ')).toBe('https://master.example:8443');
    expect(normalizeMasterUrl('http://10.0.0.5:8080/runner/')).toBe('http://10.0.0.5:8080/runner');
  });

  it('refuses what is not an http(s) URL without credentials', () => {
    expect(() => normalizeMasterUrl('master:8080')).toThrow(/must be http:\/\/ or https:\/\//);
    expect(() => normalizeMasterUrl('file:///etc')).toThrow(/must be http/);
    expect(() => normalizeMasterUrl('nothing')).toThrow(/is not a URL/);
    expect(() => normalizeMasterUrl('https://ops:secret@m:1')).toThrow(/must not carry credentials/);
  });
});

describe('ConnectionStore', () => {
  it('saves connections with the token encrypted, in a 0600 file, and reads them back', async () => {
    const electron = fakeElectron(dir);
    const store = await ConnectionStore.open(dir, electron.safeStorage);
    const prod = await store.add({ name: 'prod', url: 'https://prod.example:8443/', token: 'rnr_secret_123' });
    await store.add({ name: 'lab', url: 'http://lab:8080' });
    await store.setLast(prod.id);

    const text = await readFile(join(dir, 'connections.json'), 'utf8');
    expect(text).not.toContain('rnr_secret_123');
    expect((await stat(join(dir, 'connections.json'))).mode & 0o777).toBe(0o600);

    const again = await ConnectionStore.open(dir, electron.safeStorage);
    expect(again.list()).toEqual([
      { id: prod.id, name: 'prod', url: 'https://prod.example:8443' },
      { id: expect.any(String), name: 'lab', url: 'http://lab:8080' },
    ]);
    expect(again.last).toBe(prod.id);
    expect(again.authorization(prod.id)).toBe('Bearer rnr_secret_123');
    expect(again.authorization(again.list()[1].id)).toBeUndefined();
  });

  it('replaces a connection to the same URL instead of adding a second', async () => {
    const store = await ConnectionStore.open(dir, fakeElectron(dir).safeStorage);
    const first = await store.add({ name: 'prod', url: 'https://prod.example' });
    const second = await store.add({ name: 'production', url: 'https://prod.example/api/v1', token: 't' });
    expect(second.id).toBe(first.id);
    expect(store.list()).toEqual([{ id: first.id, name: 'production', url: 'https://prod.example' }]);
  });

  it('refuses to store a token without a keychain', async () => {
    const electron = fakeElectron(dir);
    const store = await ConnectionStore.open(dir, electron.safeStorage);
    electron.storageBackend = 'basic_text';
    await expect(store.add({ name: 'p', url: 'https://p', token: 't' })).rejects.toThrow(/no system keychain/);
    electron.storageBackend = 'kwallet5';
    electron.encryptionAvailable = false;
    await expect(store.add({ name: 'p', url: 'https://p', token: 't' })).rejects.toThrow(/no system keychain/);
    // Without a token there is nothing to protect.
    await expect(store.add({ name: 'p', url: 'https://p' })).resolves.toMatchObject({ name: 'p' });
  });

  it('removes connections, forgetting the last one used', async () => {
    const store = await ConnectionStore.open(dir, fakeElectron(dir).safeStorage);
    const c = await store.add({ name: 'p', url: 'https://p' });
    await store.setLast(c.id);
    await store.remove(c.id);
    expect(store.list()).toEqual([]);
    expect(store.last).toBeUndefined();
    await expect(store.remove(c.id)).rejects.toThrow(`no saved connection ${c.id}`);
    await expect(store.setLast('nope')).rejects.toThrow('no saved connection nope');
    await store.setLast(EMBEDDED);
    expect(store.last).toBe(EMBEDDED);
  });

  it('says which connection to add again when its token cannot be decrypted', async () => {
    const electron = fakeElectron(dir);
    const store = await ConnectionStore.open(dir, electron.safeStorage);
    const prod = await store.add({ name: 'prod', url: 'https://prod.example', token: 't' });
    const file = join(dir, 'connections.json');
    const data = JSON.parse(await readFile(file, 'utf8'));
    data.connections[0].token = Buffer.from('from another keychain').toString('base64');
    await writeFile(file, JSON.stringify(data));
    const reopened = await ConnectionStore.open(dir, electron.safeStorage);
    expect(() => reopened.authorization(prod.id)).toThrow(
      /cannot decrypt the saved token of connection "prod" \(https:\/\/prod.example\): .*add the connection again \(runner-desktop --connect https:\/\/prod.example\)/,
    );
  });

  it('saves one change after another when they come at once', async () => {
    const store = await ConnectionStore.open(dir, fakeElectron(dir).safeStorage);
    const added = await Promise.all(
      ['a', 'b', 'c', 'd'].map((n) => store.add({ name: n, url: `https://${n}.example` })),
    );
    await Promise.all([store.setLast(added[0].id), store.setLast(added[3].id), store.setLast(EMBEDDED)]);
    const reopened = await ConnectionStore.open(dir, fakeElectron(dir).safeStorage);
    expect(reopened.list().map((c) => c.name)).toEqual(['a', 'b', 'c', 'd']);
    expect(reopened.last).toBe(EMBEDDED);
  });

  it('checks names', async () => {
    const store = await ConnectionStore.open(dir, fakeElectron(dir).safeStorage);
    await expect(store.add({ name: ' ', url: 'https://p' })).rejects.toThrow(/name must be 1 to 100 characters/);
  });

  it('names a malformed file', async () => {
    await writeFile(join(dir, 'connections.json'), '{"version": 1,');
    await expect(ConnectionStore.open(dir, fakeElectron(dir).safeStorage)).rejects.toThrow(
      /connections.json is not valid JSON .*fix or delete it/,
    );
    await writeFile(join(dir, 'connections.json'), '{"version": 2, "connections": []}');
    await expect(ConnectionStore.open(dir, fakeElectron(dir).safeStorage)).rejects.toThrow(/must hold \{"version": 1/);
  });

  it("imports the CLI's saved logins, skipping expired ones", async () => {
    const runnerDir = join(dir, 'dot-runner');
    await writeLogin(runnerDir, 'https://ci.example:8443', { token: 'rnr_ci', user: 'ops' });
    await writeLogin(runnerDir, 'http://old.example:8080', { token: 'rnr_old', expires_at: '2000-01-01T00:00:00Z' });
    const store = await ConnectionStore.open(join(dir, 'app'), fakeElectron(dir).safeStorage);
    const added = await store.importLogins(runnerDir);
    expect(added).toEqual([{ id: expect.any(String), name: 'ops@ci.example:8443', url: 'https://ci.example:8443' }]);
    expect(store.authorization(added[0].id)).toBe('Bearer rnr_ci');
    expect(await store.importLogins(join(dir, 'no-such-dir'))).toEqual([]);
  });
});
