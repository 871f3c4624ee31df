import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'ldapts';

export const LDAP_SUFFIX = 'dc=example,dc=org';
export const LDAP_ADMIN = `cn=admin,${LDAP_SUFFIX}`;
const ADMIN_PASSWORD = 'slapd-admin-password';

export interface Slapd {
  url: string;
  stop(): Promise<void>;
  /** Adds entries as the directory's admin. */
  add(entries: { dn: string; attributes: Record<string, string | string[]> }[]): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Debian's slapd on a loopback port with a throwaway mdb database under a temp directory (its own
 * slapd.conf; the system's slapd configuration is not touched), holding `dc=example,dc=org`.
 */
export async function startSlapd(): Promise<Slapd> {
  const dir = mkdtempSync(join(tmpdir(), 'runner-slapd-'));
  mkdirSync(join(dir, 'db'));
  writeFileSync(
    join(dir, 'slapd.conf'),
    [
      'include /etc/ldap/schema/core.schema',
      'include /etc/ldap/schema/cosine.schema',
      'include /etc/ldap/schema/inetorgperson.schema',
      'modulepath /usr/lib/ldap',
      'moduleload back_mdb',
      `pidfile ${join(dir, 'slapd.pid')}`,
      'database mdb',
      'maxsize 10485760',
      `suffix "${LDAP_SUFFIX}"`,
      `rootdn "${LDAP_ADMIN}"`,
      `rootpw ${ADMIN_PASSWORD}`,
      `directory ${join(dir, 'db')}`,
      // Passwords are for binding only: nobody reads them back.
      'access to attrs=userPassword by anonymous auth by * none',
      'access to * by * read',
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const url = `ldap://127.0.0.1:${port}`;
  const child: ChildProcess = spawn('slapd', ['-f', join(dir, 'slapd.conf'), '-h', `${url}/`, '-d', '0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const admin = async <T>(work: (client: Client) => Promise<T>): Promise<T> => {
    const client = new Client({ url, timeout: 5000, connectTimeout: 5000 });
    try {
      await client.bind(LDAP_ADMIN, ADMIN_PASSWORD);
      return await work(client);
    } finally {
      await client.unbind().catch(() => undefined);
    }
  };
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`slapd exited (${child.exitCode}): ${output}`);
    const up = await admin(async () => true).catch(() => false);
    if (up) break;
    if (i > 100) throw new Error(`slapd did not answer on ${url}: ${output}`);
    await sleep(50);
  }
  const add: Slapd['add'] = (entries) =>
    admin(async (client) => {
      for (const entry of entries) await client.add(entry.dn, entry.attributes);
    });
  await add([
    { dn: LDAP_SUFFIX, attributes: { objectClass: ['dcObject', 'organization'], o: 'Example', dc: 'example' } },
    { dn: `ou=people,${LDAP_SUFFIX}`, attributes: { objectClass: 'organizationalUnit', ou: 'people' } },
    { dn: `ou=groups,${LDAP_SUFFIX}`, attributes: { objectClass: 'organizationalUnit', ou: 'groups' } },
  ]);
  return {
    url,
    add,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
