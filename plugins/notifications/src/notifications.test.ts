// Every channel against real local servers: an HTTP server on an ephemeral port that records what
// each chat service would receive, and an SMTP server (smtp-server) that records the mail.
import { createServer, type Server } from 'node:http';
import { MAX_NOTIFICATION_ATTEMPTS, NotificationsRef } from '@runner/plugin-sdk';
import { createTestKernel, luaCallContext, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as luaRuntime } from '@runner/plugin-lua-runtime';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plugin } from '../index.js';
import { createNotificationsModule } from './lua.js';

interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const received: Received[] = [];
const mails: string[] = [];
let server: Server;
let flakyHits = 0;
let smtp: SMTPServer;
let base = '';
let smtpUrl = '';
let kernel: TestKernel;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body });
      // /flaky fails its first try of each test; /broken every one.
      const flaky = req.url === '/flaky' && (flakyHits += 1) === 1;
      res.statusCode = req.url === '/broken' || flaky ? 500 : 200;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, _session, done) {
      let text = '';
      stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
      stream.on('end', () => (mails.push(text), done()));
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as { port: number }).port}`;
  kernel = await createTestKernel({ plugins: [luaRuntime, plugin], config: { 'notifications.smtp_url': smtpUrl } });
});

afterAll(async () => {
  await kernel.stop();
  server.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

const last = () => received[received.length - 1];

describe('the notifications module and service', () => {
  const lua = () => createNotificationsModule(kernel.get(NotificationsRef), () => ({ smtpUrl, from: 'runner@test' }));
  const message = { title: 'Deployed', text: 'web 1.4.2 is live' };

  it('posts what each chat service reads', async () => {
    const { call } = luaCallContext();
    expect(await lua().slack(call, `${base}/slack`, message)).toEqual({ ok: true, detail: 'slack 200' });
    expect(JSON.parse(last().body)).toEqual({ text: '*Deployed*\nweb 1.4.2 is live' });
    await lua().mattermost(call, `${base}/mm`, 'plain');
    expect(JSON.parse(last().body)).toEqual({ text: 'plain' });
    await lua().discord(call, `${base}/discord`, message);
    expect(JSON.parse(last().body)).toEqual({ content: '**Deployed**\nweb 1.4.2 is live' });
    await lua().teams(call, `${base}/teams`, message);
    expect(JSON.parse(last().body)).toMatchObject({
      '@type': 'MessageCard',
      title: 'Deployed',
      text: 'web 1.4.2 is live',
    });
  });

  it('publishes to ntfy with headers, and posts JSON to a webhook', async () => {
    const { call } = luaCallContext();
    await lua().ntfy(call, `${base}/deploys`, { ...message, priority: 'high' }, { token: 'tk_1' });
    expect(last()).toMatchObject({ path: '/deploys', body: 'web 1.4.2 is live' });
    expect(last().headers).toMatchObject({ title: 'Deployed', priority: 'high', authorization: 'Bearer tk_1' });
    await lua().webhook(call, `${base}/hook`, { app: 'web', n: 3 }, { headers: { 'x-key': 'k' } });
    expect(JSON.parse(last().body)).toEqual({ app: 'web', n: 3 });
    expect(last().headers['x-key']).toBe('k');
  });

  it('sends e-mail over SMTP', async () => {
    const { call } = luaCallContext();
    expect(await lua().email(call, ['ops@example.test'], message)).toEqual({
      ok: true,
      detail: 'e-mail sent to ops@example.test',
    });
    expect(mails.at(-1)).toContain('Subject: Deployed');
    expect(mails.at(-1)).toContain('web 1.4.2 is live');
  });

  it('reports a failed delivery without raising, and sends nothing in dry-run', async () => {
    const { call, lines } = luaCallContext();
    expect(await lua().slack(call, `${base}/broken`, 'x')).toEqual({ ok: false, detail: 'slack 500' });
    expect(lines.map((l) => l.message)).toContain('notification not delivered: slack 500');
    const before = received.length;
    expect(await lua().slack(luaCallContext({ dryRun: true }).call, `${base}/secret-path`, 'x')).toEqual({
      ok: true,
      skipped: true,
      note: `dry-run: would notify slack at ${new URL(base).host}`,
    });
    expect(received.length).toBe(before);
    await expect(lua().slack(call, 'ftp://x', 'x')).rejects.toThrow('must be an http(s) URL');
  });

  it('tries a failed delivery again after a doubling backoff, as many times as asked and no more', async () => {
    const sender = kernel.get(NotificationsRef);
    flakyHits = 0;
    const started = Date.now();
    const retried = await sender.send(
      { kind: 'webhook', url: `${base}/flaky` },
      { text: 'x' },
      { attempts: 3, backoffMs: 50 },
    );
    expect(retried).toEqual({ ok: true, attempts: 2, detail: 'webhook 200 (try 2 of 3; 1: webhook 500)' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
    expect(flakyHits).toBe(2);
    const gaveUp = await sender.send(
      { kind: 'webhook', url: `${base}/broken` },
      { text: 'x' },
      { attempts: 3, backoffMs: 10 },
    );
    expect(gaveUp).toEqual({
      ok: false,
      attempts: 3,
      detail: 'webhook 500 (try 3 of 3; 1: webhook 500; 2: webhook 500)',
    });
    // Once by default, and never more than MAX_NOTIFICATION_ATTEMPTS.
    expect((await sender.send({ kind: 'webhook', url: `${base}/broken` }, { text: 'x' })).attempts).toBe(1);
    const capped = await sender.send(
      { kind: 'webhook', url: `${base}/broken` },
      { text: 'x' },
      { attempts: 99, backoffMs: 1 },
    );
    expect(capped.attempts).toBe(MAX_NOTIFICATION_ATTEMPTS);
    // A stop during the backoff ends the wait at once.
    const stop = new AbortController();
    const pending = sender.send(
      { kind: 'webhook', url: `${base}/broken` },
      { text: 'x' },
      { attempts: 2, backoffMs: 60_000, signal: stop.signal },
    );
    setTimeout(() => stop.abort(), 50);
    await expect(pending).rejects.toThrow();
  });
});
