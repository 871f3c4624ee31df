// LDAP login end to end: Debian's slapd on loopback with people and groups, a real `runner server`
// configured to use it, logins from curl-like fetches.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LDAP_SUFFIX, startSlapd, type Slapd } from '../support/slapd.js';
import { hasTool } from '../support/tools.js';
import { spawnRunner, stopAll, tempDataDir, waitForOutput } from './helpers.js';

const haveSlapd = hasTool('slapd', 'slapd');
let slapd: Slapd;
let base: string;
const children: ReturnType<typeof spawnRunner>[] = [];

const person = (uid: string, password: string) => ({
  dn: `uid=${uid},ou=people,${LDAP_SUFFIX}`,
  attributes: { objectClass: 'inetOrgPerson', uid, cn: uid, sn: uid, userPassword: password },
});
const group = (cn: string, members: string[]) => ({
  dn: `cn=${cn},ou=groups,${LDAP_SUFFIX}`,
  attributes: {
    objectClass: 'groupOfNames',
    cn,
    member: members.map((uid) => `uid=${uid},ou=people,${LDAP_SUFFIX}`),
  },
});

beforeAll(async () => {
  if (!haveSlapd) return;
  slapd = await startSlapd();
  await slapd.add([
    person('olga', 'olga-password'),
    person('dave', 'dave-password'),
    person('nora', 'nora-password'),
    group('ops', ['olga']),
    group('devs', ['dave', 'olga']),
    group('other', ['nora']),
  ]);
  const dataDir = tempDataDir('runner-auth-ldap-');
  writeFileSync(
    join(dataDir, 'config.yaml'),
    [
      'auth:',
      '  ldap:',
      `    url: ${slapd.url}`,
      `    user_base: ou=people,${LDAP_SUFFIX}`,
      `    group_base: ou=groups,${LDAP_SUFFIX}`,
      '    group_roles:',
      '      ops: operator',
      '      devs: developer',
      '',
    ].join('\n'),
  );
  const child = spawnRunner(['server', '--http-port', '0', '--port', '0'], { env: { RUNNER_DATA_DIR: dataDir } });
  children.push(child);
  const [, address] = await waitForOutput(child, /REST API listening on (127\.0\.0\.1:\d+)/);
  base = `http://${address}/api/v1`;
}, 30_000);

afterAll(async () => {
  stopAll(children, 'SIGTERM');
  await slapd?.stop();
});

async function login(username: string, password: string) {
  const response = await fetch(`${base}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

describe.skipIf(!haveSlapd)('LDAP login against slapd', () => {
  it('logs a directory user in with the highest role of their groups', async () => {
    const olga = await login('olga', 'olga-password');
    expect(olga.status).toBe(200);
    expect(olga.body.user).toEqual({ name: 'olga', role: 'operator' });
    const me = await fetch(`${base}/auth/me`, { headers: { authorization: `Bearer ${olga.body.token}` } });
    expect(await me.json()).toMatchObject({ name: 'olga', role: 'operator', method: 'jwt' });
    expect((await login('dave', 'dave-password')).body.user).toEqual({ name: 'dave', role: 'developer' });
  });

  it('accepts HTTP Basic with directory credentials', async () => {
    const basic = Buffer.from('dave:dave-password').toString('base64');
    const me = await fetch(`${base}/auth/me`, { headers: { authorization: `Basic ${basic}` } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ name: 'dave', role: 'developer', method: 'basic' });
    // An empty password would be an LDAP "unauthenticated bind", which slapd accepts: never a login.
    const empty = Buffer.from('olga:').toString('base64');
    expect((await fetch(`${base}/auth/me`, { headers: { authorization: `Basic ${empty}` } })).status).toBe(401);
  });

  it('answers a wrong password, an unknown user, an empty password and a filter injection with the one 401', async () => {
    for (const [user, password] of [
      ['olga', 'wrong-password'],
      ['nobody', 'whatever-pass'],
      ['olga', ''],
      ['*', 'olga-password'],
      ['olga)(uid=*', 'olga-password'],
    ]) {
      const answer = await login(user, password);
      expect(answer.status, `${user}/${password}`).toBe(password === '' ? 400 : 401);
      if (answer.status === 401) expect(answer.body.error.message).toBe('invalid username or password');
    }
  });

  it('refuses a directory user in no mapped group with 403', async () => {
    const nora = await login('nora', 'nora-password');
    expect(nora.status).toBe(403);
    expect(nora.body.error.message).toContain('auth.ldap.group_roles');
  });
});
