import { afterEach, describe, expect, it } from 'vitest';
import { Permissions } from '@runner/plugin-sdk';
import { BAD_LOGIN, CSRF_HEADER, SESSION_COOKIE } from './authenticator.js';
import { NO_CREDENTIALS } from './guards.js';
import { scryptHashes } from './passwords.js';
import { authParts, basic, bearer, LOCAL_TOKEN, type AuthParts } from './test-support.js';

const run = { method: 'POST', path: '/workflows/run', permission: Permissions.workflowExecute } as const;
const list = { method: 'GET', path: '/executions', permission: Permissions.workflowView } as const;
const health = { method: 'GET', path: '/health', permission: Permissions.public } as const;

let parts: AuthParts;
afterEach(async () => {
  await parts?.audit.close();
  await parts?.kernel.stop();
});

async function withUsers(options: Parameters<typeof authParts>[0] = {}): Promise<AuthParts> {
  parts = await authParts(options);
  const now = new Date();
  await parts.accounts.addUser('alice', 'admin', 'alice-password', now);
  await parts.accounts.addUser('vic', 'viewer', 'vic-password', now);
  return parts;
}

describe('authentication guard', () => {
  it('refuses a request without credentials with 401, and lets public routes through', async () => {
    const { pass } = await withUsers();
    await expect(pass(list)).rejects.toMatchObject({ status: 401, message: NO_CREDENTIALS });
    const context = await pass(health);
    expect(context.principal).toBeUndefined();
  });

  it('accepts HTTP Basic, and answers a wrong password and an unknown user with the same 401', async () => {
    const { pass } = await withUsers();
    const context = await pass({ ...run, headers: basic('alice', 'alice-password') });
    expect(context.principal).toMatchObject({ name: 'alice', role: 'admin', method: 'basic' });
    const wrong = await pass({ ...list, headers: basic('alice', 'nope-nope') }).catch((e: Error) => e);
    const unknown = await pass({ ...list, headers: basic('mallory', 'nope-nope') }).catch((e: Error) => e);
    expect(wrong).toMatchObject({ status: 401, message: BAD_LOGIN });
    expect(unknown).toMatchObject({ status: 401, message: BAD_LOGIN });
  });

  it('refuses a repeated wrong Basic header without hashing again: a failure costs no more than a success', async () => {
    const { pass, accounts } = await withUsers();
    const right = basic('alice', 'alice-password');
    const wrong = basic('alice', 'not-alices-password');
    const hashes = async (headers: Record<string, string>, address: string) => {
      const before = scryptHashes();
      await pass({ ...list, headers, address }).catch(() => undefined);
      return scryptHashes() - before;
    };
    expect(await hashes(right, '10.0.0.1')).toBe(1);
    expect(await hashes(right, '10.0.0.1')).toBe(0);
    expect(await hashes(wrong, '10.0.0.2')).toBe(1);
    await expect(pass({ ...list, headers: wrong, address: '10.0.0.2' })).rejects.toMatchObject({ status: 401 });
    expect(await hashes(wrong, '10.0.0.2')).toBe(0);
    // Once the password changes to what the header says, the header is checked again and passes.
    await accounts.setPassword('alice', 'not-alices-password', new Date());
    expect((await pass({ ...list, headers: wrong, address: '10.0.0.3' })).principal?.name).toBe('alice');
  });

  it('accepts a session token until logout revokes it; the role is the user’s current one', async () => {
    const { pass, accounts, authenticator } = await withUsers();
    const session = authenticator.issueSession(accounts.requireUser('vic'));
    expect((await pass({ ...list, headers: bearer(session.token) })).principal).toMatchObject({
      name: 'vic',
      method: 'jwt',
    });
    await expect(pass({ ...run, headers: bearer(session.token) })).rejects.toMatchObject({ status: 403 });
    await accounts.setRole('vic', 'operator', new Date());
    expect((await pass({ ...run, headers: bearer(session.token) })).principal?.role).toBe('operator');
    await authenticator.revoke(session.jti, session.expires);
    await expect(pass({ ...list, headers: bearer(session.token) })).rejects.toMatchObject({ status: 401 });
  });

  it('refuses a tampered, foreign or expired session token', async () => {
    let clock = Date.now();
    const { pass, accounts, authenticator } = await withUsers({ now: () => clock });
    const { token } = authenticator.issueSession(accounts.requireUser('alice'));
    const [header, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, sub: 'someone-else' })).toString('base64url');
    await expect(pass({ ...list, headers: bearer(`${header}.${forged}.${signature}`) })).rejects.toMatchObject({
      status: 401,
    });
    const none = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    await expect(pass({ ...list, headers: bearer(`${none}.${payload}.`) })).rejects.toMatchObject({ status: 401 });
    clock += 3_600_001;
    await expect(pass({ ...list, headers: bearer(token) })).rejects.toMatchObject({ status: 401 });
  });

  it('accepts API tokens with their role until they expire or are revoked', async () => {
    const { pass, accounts } = await withUsers();
    const now = new Date();
    const ci = await accounts.addToken('ci', 'operator', 'alice', null, now);
    const old = await accounts.addToken('old', 'admin', 'alice', new Date(now.getTime() - 1000), now);
    expect((await pass({ ...run, headers: bearer(ci.secret) })).principal).toMatchObject({
      name: 'ci',
      role: 'operator',
      method: 'token',
    });
    await expect(pass({ ...list, headers: bearer(old.secret) })).rejects.toMatchObject({ status: 401 });
    await accounts.revokeToken('ci');
    await expect(pass({ ...run, headers: bearer(ci.secret) })).rejects.toMatchObject({ status: 401 });
    // Only the hash is kept.
    expect(JSON.stringify(await parts.store.all('SELECT * FROM auth_tokens'))).not.toContain(old.secret);
  });

  it('accepts the local credential of this start as an admin, and no other', async () => {
    const { pass } = await withUsers();
    expect((await pass({ ...run, headers: bearer(LOCAL_TOKEN) })).principal).toMatchObject({
      method: 'local',
      role: 'admin',
    });
    await expect(pass({ ...run, headers: bearer('rnr_local_from-another-start') })).rejects.toMatchObject({
      status: 401,
    });
  });

  it('asks a cookie session for the CSRF header on changes only', async () => {
    const { pass, accounts, authenticator } = await withUsers();
    const session = authenticator.issueSession(accounts.requireUser('alice'));
    const cookie = { cookie: `theme=dark; ${SESSION_COOKIE}=${session.token}` };
    expect((await pass({ ...list, headers: cookie })).principal?.name).toBe('alice');
    await expect(pass({ ...run, headers: cookie })).rejects.toMatchObject({ status: 401 });
    await expect(pass({ ...run, headers: { ...cookie, [CSRF_HEADER]: 'guess' } })).rejects.toMatchObject({
      status: 401,
    });
    expect((await pass({ ...run, headers: { ...cookie, [CSRF_HEADER]: session.csrf } })).principal?.name).toBe('alice');
  });

  it('makes every caller an anonymous admin when authentication is off', async () => {
    const { pass } = await withUsers({ enabled: false });
    expect((await pass(run)).principal).toMatchObject({ name: 'anonymous', role: 'admin', method: 'none' });
  });
});

describe('authorization guard', () => {
  it('answers 403 naming the permission', async () => {
    const { pass } = await withUsers();
    await expect(pass({ ...run, headers: basic('vic', 'vic-password') })).rejects.toMatchObject({
      status: 403,
      message: 'vic (role viewer) lacks the permission workflow:execute, needed for POST /api/v1/workflows/run',
    });
  });
});

describe('login throttle', () => {
  it('answers 429 without checking the password after repeated failures of one user and address', async () => {
    let clock = Date.now();
    const { pass } = await withUsers({ now: () => clock });
    for (let i = 0; i < 3; i++) {
      await expect(pass({ ...list, headers: basic('alice', `wrong-${i}`) })).rejects.toMatchObject({ status: 401 });
    }
    // Even the right password waits: the attacker cannot tell it from a wrong one.
    await expect(pass({ ...list, headers: basic('alice', 'alice-password') })).rejects.toMatchObject({ status: 429 });
    // Another address, and another user, are not held back.
    expect(
      (await pass({ ...list, headers: basic('alice', 'alice-password'), address: '10.0.0.9' })).principal?.name,
    ).toBe('alice');
    expect((await pass({ ...list, headers: basic('vic', 'vic-password') })).principal?.name).toBe('vic');
    clock += 1001;
    expect((await pass({ ...list, headers: basic('alice', 'alice-password') })).principal?.name).toBe('alice');
  });
});

describe('login throttle under parallel guesses', () => {
  it('checks at most the threshold of passwords when guesses arrive all at once', async () => {
    const { pass } = await withUsers();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        pass({ ...list, headers: basic('alice', `parallel-${i}`) }).then(
          () => 200,
          (error: { status: number }) => error.status,
        ),
      ),
    );
    expect(answers.filter((s) => s === 401)).toHaveLength(3);
    expect(answers.filter((s) => s === 429)).toHaveLength(9);
  });
});

describe('audit guard', () => {
  it('records every call that changes state, and refusals, with user, ip, resource, action and result', async () => {
    const { pass, audit } = await withUsers();
    const context = await pass({ ...run, headers: basic('alice', 'alice-password'), address: '10.1.2.3' });
    context.finish(202);
    await pass({ ...list, headers: basic('alice', 'alice-password') }).then((c) => c.finish(200));
    await pass({ ...run, headers: basic('vic', 'vic-password') }).catch(() => undefined);
    await pass(run).catch(() => undefined);
    await audit.flush();
    const { records, total } = await audit.list({ limit: 10, offset: 0 });
    expect(total).toBe(3);
    expect(records.map((r) => [r.event, r.user, r.result, r.status])).toEqual([
      ['auth.missing', 'anonymous', 'failure', 401],
      ['access.denied', 'vic', 'failure', 403],
      ['api.call', 'alice', 'success', 202],
    ]);
    expect(records[2]).toMatchObject({
      ip: '10.1.2.3',
      resource: '/api/v1/workflows/run',
      action: 'POST /api/v1/workflows/run',
      request_id: 'req-1',
    });
    expect((await audit.list({ limit: 10, offset: 0, user: 'vic' })).total).toBe(1);
  });
});
