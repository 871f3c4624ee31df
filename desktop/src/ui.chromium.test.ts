// The web UI inside the shell's constraints, in Debian's Chromium: the shell (fake facade) starts
// a real embedded master, whose ui plugin serves the built UI; the page gets the master's
// credential as the shell adds it (no login), the shell's Content-Security-Policy on its pages,
// and the built preload bridge. Electron adds the policy in its network layer; here a loopback
// proxy in front of the master does (a response the browser test itself fulfilled would lose
// its loopback address space, and Chromium would then refuse its WebSocket to the master). Every page of the UI must load with no console error
// and no failed request. Runs when the build has the ui plugin (plugins/ui, ui/build).
import { existsSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { injectPreload, launchChromium } from './chromium-support.js';
import { fakeElectron, type FakeElectron } from './fake-electron.js';
import { DesktopShell } from './shell.js';
import { CONTENT_SECURITY_POLICY, withContentSecurityPolicy } from './window.js';

const root = resolve(import.meta.dirname, '..', '..');
const uiBuilt =
  existsSync(join(root, 'plugins', 'ui', 'package.json')) && existsSync(join(root, 'ui', 'build', 'index.html'));
const PAGES = ['/', '/agents', '/agent-control', '/executions', '/logs', '/settings'];

let userData: string;
let electron: FakeElectron;
let shell: DesktopShell | undefined;
let browser: Browser | undefined;
let base: string;
let proxy: Server;
let proxyBase: string;

/** Forwards to the master, adding the shell's policy to HTML responses; WebSocket upgrades pass through. */
async function policyProxy(target: URL): Promise<Server> {
  const server = createServer((request, response) => {
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, path: request.url, method: request.method, headers: request.headers },
      (answer) => {
        const multi = Object.fromEntries(
          Object.entries(answer.headers).map(([k, v]) => [k, Array.isArray(v) ? v : [String(v)]]),
        );
        const html = String(answer.headers['content-type'] ?? '').startsWith('text/html');
        const headers = html ? withContentSecurityPolicy(`${proxyBase}${request.url}`, multi, proxyBase) : multi;
        response.writeHead(answer.statusCode!, headers);
        answer.pipe(response);
      },
    );
    request.pipe(upstream);
  });
  server.on('upgrade', (request, socket, head) => {
    const upstream = connect(Number(target.port), target.hostname, () => {
      const lines = Object.entries(request.headers).map(([k, v]) => `${k}: ${v}`);
      upstream.write(`${request.method} ${request.url} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`);
      upstream.write(head);
      socket.pipe(upstream).pipe(socket);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return server;
}

beforeAll(async () => {
  if (!uiBuilt) return;
  userData = await mkdtemp(join(tmpdir(), 'runner-desktop-ui-'));
  electron = fakeElectron(userData);
  shell = await DesktopShell.start({
    facade: electron,
    env: { PATH: process.env.PATH, RUNNER_BIN: join(root, 'kernel', 'bin', 'runner.js') },
    argv: ['runner'],
    platform: 'linux',
    execPath: process.execPath,
    appPath: join(root, 'desktop'),
    preloadPath: join(root, 'desktop', 'dist', 'preload.cjs'),
    connectionsPreloadPath: join(root, 'desktop', 'dist', 'preload-connections.cjs'),
    connectionsPageUrl: pathToFileURL(join(root, 'desktop', 'static', 'connections.html')).href,
    trayIconPath: join(root, 'desktop', 'build', 'tray.png'),
    log: () => undefined,
    trayIntervalMs: 60_000,
  });
  base = shell!.current!.url;
  proxy = await policyProxy(new URL(base));
  proxyBase = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  if (proxy) await new Promise((r) => proxy.close(r));
  await shell?.stop();
  if (userData) await rm(userData, { recursive: true, force: true });
});

describe.skipIf(!uiBuilt)('the web UI in the desktop shell', () => {
  it('loads every page with the embedded master credential, the CSP and the bridge, without an error', async () => {
    const context = await browser!.newContext({ viewport: { width: 1280, height: 800 } });
    // Electron adds the credential in its network layer, WebSocket included; Chromium's extra
    // headers do the same here, with the value the shell computes for the master.
    await context.setExtraHTTPHeaders(await electron.sendHeaders(`${base}/`, {}));
    const page = await context.newPage();
    await injectPreload(page, electron, (url) => url.replace(proxyBase, base));
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('requestfailed', (request) => {
      // Streams still open when the test moves to the next page are cut by that navigation.
      if (request.failure()?.errorText !== 'net::ERR_ABORTED')
        problems.push(`failed: ${request.url()} ${request.failure()?.errorText}`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`HTTP ${response.status()}: ${response.url()}`);
    });

    for (const path of PAGES) {
      await page.goto(`${proxyBase}${path}`);
      await page.locator('main').first().waitFor();
      // Signed in through the shell's credential: no detour to the login page.
      expect(new URL(page.url()).pathname).toBe(path);
      expect(await page.evaluate('typeof window.runnerDesktop.openWorkflowFile')).toBe('function');
    }
    expect(problems).toEqual([]);

    // The bridge answers the UI's page: the chooser opens (the user cancels it).
    electron.answers.push('cancel');
    expect(await page.evaluate('window.runnerDesktop.chooseConnection()')).toBeNull();
    expect(electron.messageBoxes.at(-1)?.title).toBe('Choose a master');

    // The shell's policy is in force beside the UI's own: the UI's says nothing of form-action,
    // the shell's keeps forms to the master.
    expect(CONTENT_SECURITY_POLICY).toContain("form-action 'self'");
    const violated = await page.evaluate(`new Promise((resolveViolation) => {
      document.addEventListener('securitypolicyviolation', (e) => resolveViolation(e.violatedDirective));
      const form = document.createElement('form');
      form.action = 'https://example.org/collect';
      document.body.append(form);
      form.submit();
    })`);
    expect(violated).toBe('form-action');
    await context.close();
  });
});
