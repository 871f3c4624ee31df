// A user changes their own password (POST /api/v1/auth/me/password) on a real `runner server`:
// the current password is asked, the user's other sessions end, the caller's goes on with a new
// session token, and the audit log has it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchAs, spawnRunner, stopAll, tempDataDir, waitForOutput } from './helpers.js';

const children: ReturnType<typeof spawnRunner>[] = [];
let base: string;
let asLocal: ReturnType<typeof fetchAs>;

beforeAll(async () => {
  const dataDir = tempDataDir('runner-password-');
  const child = spawnRunner(['server', '--http-port', '0', '--port', '0'], { env: { RUNNER_DATA_DIR: dataDir } });
  children.push(child);
  const [, address] = await waitForOutput(child, /REST API listening on (127\.0\.0\.1:\d+)/);
  base = `http://${address}/api/v1`;
  asLocal = fetchAs(dataDir);
  const added = await asLocal(`${base}/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'vera', role: 'viewer', password: 'first-password' }),
  });
  expect(added.status).toBe(201);
}, 30_000);

afterAll(() => {
  stopAll(children, 'SIGTERM');
});

async function call(path: string, init: { token?: string; body?: unknown; method?: string } = {}) {
  const response = await fetch(`${base}${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

const login = async (password: string) => {
  const r = await call('/auth/login', { body: { username: 'vera', password } });
  return { status: r.status, token: r.body.token as string };
};
const change = (token: string, current: string, next: string) =>
  call('/auth/me/password', { token, body: { current_password: current, new_password: next } });

describe('changing your own password', () => {
  it('asks the current password and names what is wrong', async () => {
    const { token } = await login('first-password');
    const wrong = await change(token, 'not-the-password', 'second-password');
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toMatchObject({ field: 'current_password', message: 'the current password is not right' });
    const short = await change(token, 'first-password', 'short');
    expect(short.status).toBe(400);
    expect(short.body.error).toMatchObject({ field: 'new_password' });
    const same = await change(token, 'first-password', 'first-password');
    expect(same.status).toBe(400);
    expect(same.body.error).toMatchObject({ field: 'new_password' });
    // Nothing changed.
    expect((await login('first-password')).status).toBe(200);
  });

  it("ends the user's other sessions, keeps the caller signed in with a new token, and is audited", async () => {
    const [a, b] = [await login('first-password'), await login('first-password')];
    expect((await call('/auth/me', { token: b.token })).status).toBe(200);
    const changed = await change(a.token, 'first-password', 'second-password');
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ token_type: 'Bearer', token: expect.any(String) });
    for (const old of [a.token, b.token]) expect((await call('/auth/me', { token: old })).status).toBe(401);
    expect((await call('/auth/me', { token: changed.body.token as string })).body).toMatchObject({ name: 'vera' });
    expect((await login('first-password')).status).toBe(401);
    const fresh = await login('second-password');
    expect(fresh.status).toBe(200);
    expect((await call('/auth/me', { token: fresh.token })).status).toBe(200);

    const audit = (await (await asLocal(`${base}/audit?limit=1000`)).json()) as {
      records: { event: string; user: string; result: string }[];
    };
    const events = audit.records.filter((r) => r.user === 'vera').map((r) => `${r.event} ${r.result}`);
    expect(events).toContain('auth.password_changed success');
    expect(events).toContain('auth.password_change_failed failure');
    expect(JSON.stringify(audit)).not.toContain('second-password');
  });

  it('is refused to callers without a password of their own here (an API token)', async () => {
    const created = await asLocal(`${base}/auth/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'robot', role: 'viewer' }),
    });
    const { token } = (await created.json()) as { token: string };
    const refused = await change(token, 'anything-at-all', 'another-password');
    expect(refused.status).toBe(403);
    expect((refused.body.error as { message: string }).message).toContain('robot is not a user with a password');
  });
});
