// Real accounts on this machine (the tests run as root), removed again at the end.
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { luaCallContext } from '@runner/plugin-sdk/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { createUserModule, keyIdentity } from './user.js';

const user = createUserModule();
const NAME = 'rnr-usertest';
const GROUP = 'rnr-grptest';
const home = join(mkdtempSync(join(tmpdir(), 'user-test-')), NAME);
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHJ1bm5lci10ZXN0LWtleS1ub3QtcmVhbC0wMDAw ci@example';
const call = () => luaCallContext().call;

afterAll(async () => {
  await user.absent(call(), NAME, { remove_home: true });
  await user.group_absent(call(), GROUP);
});

describe('user, for real', () => {
  it('creates a user, changes only what differs, manages groups and keys, and removes it', async () => {
    expect(await user.present(luaCallContext({ dryRun: true }).call, NAME, { home })).toMatchObject({
      changed: true,
      note: `dry-run: would create user ${NAME}`,
    });
    expect(await user.info(call(), NAME)).toEqual({ exists: false });

    expect(await user.group_present(call(), GROUP)).toMatchObject({ changed: true });
    expect(await user.group_present(call(), GROUP)).toMatchObject({ changed: false });
    expect(await user.present(call(), NAME, { home, shell: '/bin/sh' })).toMatchObject({
      changed: true,
      created: true,
    });
    expect(await user.present(call(), NAME, { home, shell: '/bin/sh' })).toMatchObject({ changed: false });
    expect(await user.present(call(), NAME, { shell: '/bin/bash', groups: [GROUP] })).toMatchObject({ changed: true });
    expect(await user.info(call(), NAME)).toMatchObject({
      exists: true,
      shell: '/bin/bash',
      home,
      groups: [NAME, GROUP],
    });
    expect(await user.add_to_group(call(), NAME, GROUP)).toEqual({ changed: false });
    expect(await user.remove_from_group(call(), NAME, GROUP)).toEqual({ changed: true });
    expect(await user.remove_from_group(call(), NAME, GROUP)).toEqual({ changed: false });
    expect(await user.add_to_group(call(), NAME, GROUP)).toEqual({ changed: true });

    const path = join(home, '.ssh', 'authorized_keys');
    expect(await user.authorized_key(call(), NAME, KEY)).toEqual({ changed: true, path });
    // The same key with another comment is the same key.
    expect(await user.authorized_key(call(), NAME, KEY.replace('ci@example', 'other'))).toEqual({
      changed: false,
      path,
    });
    expect(readFileSync(path, 'utf8')).toBe(`${KEY}\n`);
    const info = (await user.info(call(), NAME)) as { uid: number };
    expect(statSync(path)).toMatchObject({ uid: info.uid });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, '.ssh')).mode & 0o777).toBe(0o700);
    expect(await user.authorized_key(call(), NAME, KEY, { state: 'absent' })).toEqual({ changed: true, path });
    expect(readFileSync(path, 'utf8')).toBe('');

    expect(await user.absent(call(), NAME, { remove_home: true })).toEqual({ changed: true, name: NAME });
    expect(await user.absent(call(), NAME)).toEqual({ changed: false, name: NAME });
    expect(await user.group_absent(call(), GROUP)).toEqual({ changed: true, name: GROUP });
  });

  it('knows a key by its type and base64, and refuses what is not a key', async () => {
    expect(keyIdentity('from="10.0.0.1" ssh-rsa AAAAB3Nza== me')).toBe('ssh-rsa AAAAB3Nza==');
    await expect(user.authorized_key(call(), 'root', 'not a key')).rejects.toThrow('is not an SSH public key line');
  });
});
