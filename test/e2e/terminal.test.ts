// The terminal end to end: a real `runner server` and a real `runner agent start` on loopback, a
// session opened through the API and typed into over its WebSocket (a PTY on the agent through the
// agent's gRPC connection), resized, files moved both ways, reattached after the socket dropped;
// a Viewer refused; a logout ending the session; every start and end in the audit log.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { apiCall, Fleet, type Master } from './ui/fleet.js';

const fleet = new Fleet();
let master: Master;
let admin = '';
const AGENT = 'term-1';

async function logIn(username: string, password: string): Promise<string> {
  const { token } = await apiCall<{ token: string }>(master, 'POST', '/auth/login', { username, password });
  return token;
}

async function call(token: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${master.origin}/api/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** A socket on a session with everything it printed, and a wait for text to appear. */
async function attach(token: string, id: string) {
  const ws = new WebSocket(`${master.origin.replace('http', 'ws')}/api/v1/terminal/sessions/${id}/socket`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const seen = {
    text: '',
    messages: [] as { type: string; code?: number | null }[],
    closed: undefined as number | undefined,
  };
  ws.on('message', (data: Buffer, binary: boolean) => {
    if (binary) seen.text += data.toString();
    else seen.messages.push(JSON.parse(data.toString()));
  });
  ws.on('close', (code) => (seen.closed = code));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
  const until = async (check: () => boolean, what: string, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`${what} did not happen; the terminal shows:\n${seen.text}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const type = (keys: string) => ws.send(Buffer.from(keys), { binary: true });
  return { ws, seen, until, type };
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

beforeAll(async () => {
  master = await fleet.master();
  await fleet.agent(master, AGENT);
  admin = await logIn('admin', master.adminPassword);
}, 60_000);

afterAll(() => fleet.stop());

describe('terminal on a real agent', () => {
  it('types, reads, resizes and moves files through a PTY on the agent', async () => {
    const opened = await call(admin, 'POST', '/terminal/sessions', { target: AGENT, rows: 24, cols: 80 });
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    expect(opened.body).toMatchObject({ target: AGENT, user: 'admin', status: 'open' });
    const term = await attach(admin, opened.body.id);
    term.type('echo hel""lo-$((6*7))\r');
    await term.until(() => term.seen.text.includes('hello-42'), 'the echo');

    term.ws.send(JSON.stringify({ type: 'resize', rows: 40, cols: 132 }));
    term.type('stty size\r');
    await term.until(() => term.seen.text.includes('40 132'), 'the resize');

    const data = randomBytes(300_000);
    const path = `/tmp/runner-terminal-${randomBytes(4).toString('hex')}`;
    const up = await call(admin, 'POST', `/terminal/sessions/${opened.body.id}/upload`, {
      path,
      content_base64: data.toString('base64'),
    });
    expect(up.body).toEqual({ path, bytes: data.length });
    term.type(`sha256sum ${path}\r`);
    await term.until(() => term.seen.text.includes(sha256(data)), 'the checksum on the host');
    const down = await call(
      admin,
      'GET',
      `/terminal/sessions/${opened.body.id}/download?path=${encodeURIComponent(path)}`,
    );
    expect(sha256(Buffer.from(down.body.content_base64, 'base64'))).toBe(sha256(data));

    term.type(`rm ${path}; exit 3\r`);
    await term.until(() => term.seen.messages.some((m) => m.type === 'exit'), 'the end of the shell');
    expect(term.seen.messages.find((m) => m.type === 'exit')?.code).toBe(3);
  });

  it('reattaches to a live session with what it printed, and a Viewer can neither open nor attach', async () => {
    const opened = await call(admin, 'POST', '/terminal/sessions', { target: `agent:${AGENT}` });
    const first = await attach(admin, opened.body.id);
    first.type('echo mark""er-one\r');
    await first.until(() => first.seen.text.includes('marker-one'), 'the first echo');
    first.ws.close();
    await first.until(() => first.seen.closed !== undefined, 'the close');

    const listed = await call(admin, 'GET', '/terminal/sessions');
    expect(listed.body.sessions.map((s: { id: string }) => s.id)).toContain(opened.body.id);
    const again = await attach(admin, opened.body.id);
    await again.until(() => again.seen.text.includes('marker-one'), 'the scrollback');
    again.type('echo mark""er-two\r');
    await again.until(() => again.seen.text.includes('marker-two'), 'the second echo');

    await apiCall(master, 'POST', '/users', { name: 'watcher', role: 'viewer', password: 'Watcher-passw0rd!' });
    const viewer = await logIn('watcher', 'Watcher-passw0rd!');
    expect((await call(viewer, 'POST', '/terminal/sessions', { target: AGENT })).status).toBe(403);
    await expect(attach(viewer, opened.body.id)).rejects.toThrow(/upgrade refused: 403/);
    expect((await call(admin, 'DELETE', `/terminal/sessions/${opened.body.id}`)).status).toBe(204);
    await again.until(() => again.seen.closed !== undefined, 'the close after DELETE');
  });

  it("ends a session when its user's session is revoked, and audits every start and end", async () => {
    const token = await logIn('admin', master.adminPassword);
    const opened = await call(token, 'POST', '/terminal/sessions', { target: AGENT });
    const term = await attach(token, opened.body.id);
    term.type('echo up\r');
    await term.until(() => term.seen.text.includes('up'), 'the shell');
    expect((await call(token, 'POST', '/auth/logout')).status).toBe(200);
    await term.until(() => term.seen.closed !== undefined, 'the end after logout');
    expect(
      (await call(admin, 'GET', '/terminal/sessions')).body.sessions.map((s: { id: string }) => s.id),
    ).not.toContain(opened.body.id);

    const { records } = await apiCall<{ records: { event: string; user: string; resource: string; detail: string }[] }>(
      master,
      'GET',
      '/audit?limit=200',
    );
    const mine = records.filter((r) => r.resource === `terminal/${opened.body.id}`);
    expect(mine.map((r) => [r.event, r.user])).toEqual([
      ['terminal.closed', 'admin'],
      ['terminal.opened', 'admin'],
    ]);
    expect(mine[1].detail).toBe(`a shell on ${AGENT}`);
    expect(mine[0].detail).toMatch(/credential revoked/);
  });
});
