// The preload bridge in a real Chromium (Debian's, driven by playwright-core): the built
// dist/preload.cjs runs before the page as Electron would run it, with `require('electron')`
// answering contextBridge and an ipcRenderer whose calls reach the shell's real IPC handlers
// (registered on the fake facade). The page is served with the shell's Content-Security-Policy.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { injectPreload, launchChromium } from './chromium-support.js';
import { fakeElectron, type FakeElectron } from './fake-electron.js';
import { registerIpcHandlers } from './ipc.js';
import { withContentSecurityPolicy } from './window.js';

const PAGE = `<!doctype html><html lang="en"><head><title>runner</title></head>
<body><main>runner</main><script src="/page.js"></script></body></html>`;
// What a page of the UI can see and do; the test reads the results from window.results.
const PAGE_SCRIPT = `
window.results = {
  require: typeof require,
  process: typeof process,
  module: typeof module,
  ipcRenderer: typeof ipcRenderer,
  bridgeKeys: window.runnerDesktop ? Object.keys(window.runnerDesktop).sort() : null,
  frozen: Object.isFrozen(window.runnerDesktop),
};
try { eval('1'); window.results.eval = 'ran'; } catch (e) { window.results.eval = 'blocked'; }
`;

let server: Server;
let other: Server;
let base: string;
let otherBase: string;
let browser: Browser;
let electron: FakeElectron;
let dir: string;

async function listen(handler: Parameters<typeof createServer>[1]): Promise<[Server, string]> {
  const s = createServer(handler);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return [s, `http://127.0.0.1:${(s.address() as AddressInfo).port}`];
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'runner-desktop-chromium-'));
  [server, base] = await listen((request, response) => {
    const headers = withContentSecurityPolicy(`${base}${request.url}`, {}, base);
    const html = request.url === '/';
    response.writeHead(html || request.url === '/page.js' ? 200 : 404, {
      ...headers,
      'content-type': html ? 'text/html' : 'text/javascript',
    });
    response.end(html ? PAGE : request.url === '/page.js' ? PAGE_SCRIPT : '');
  });
  // Another origin with a script: the policy must keep it out of the page.
  [other, otherBase] = await listen((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/javascript' });
    response.end('window.foreign = true;');
  });
  electron = fakeElectron(dir);
  registerIpcHandlers({
    facade: electron,
    masterOrigin: () => base,
    window: () => undefined,
    chooseConnection: async () => ({ id: 'embedded', name: 'Embedded master', url: base }),
    showWindow: () => undefined,
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await Promise.all([server, other].map((s) => new Promise((r) => s?.close(r))));
  await rm(dir, { recursive: true, force: true });
});

async function openPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await injectPreload(page, electron);
  await page.goto(`${base}/`);
  return { page, errors };
}

describe('the preload bridge in Chromium', () => {
  it('gives the page runnerDesktop and no Node', async () => {
    const { page, errors } = await openPage();
    expect(await page.evaluate('window.results')).toEqual({
      require: 'undefined',
      process: 'undefined',
      module: 'undefined',
      ipcRenderer: 'undefined',
      bridgeKeys: ['chooseConnection', 'notifyRunFailed', 'openWorkflowFile', 'version'],
      frozen: true,
      eval: 'blocked',
    });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('carries the three calls to the main process and its answers and errors back', async () => {
    const { page } = await openPage();
    const file = join(dir, 'nightly.yaml');
    await writeFile(file, 'name: nightly\n');
    electron.answers.push([file]);
    // Page code is given as text: the project's TypeScript has no DOM types.
    const answers = await page.evaluate(`(async () => {
      const bridge = window.runnerDesktop;
      const errorOf = (p) => p.then(() => 'resolved', (e) => e.message);
      return {
        connection: await bridge.chooseConnection(),
        file: await bridge.openWorkflowFile(),
        notified: await bridge.notifyRunFailed({ runId: 'r-42', workflow: 'nightly', message: 'disk full' }),
        badRun: await errorOf(bridge.notifyRunFailed({ runId: 42 })),
      };
    })()`);
    expect(answers).toEqual({
      connection: { id: 'embedded', name: 'Embedded master', url: base },
      file: { name: 'nightly.yaml', path: file, content: 'name: nightly\n' },
      notified: undefined,
      badRun: expect.stringMatching(/runId must be a non-empty string/),
    });
    expect(electron.notifications.map(({ title, body }) => ({ title, body }))).toEqual([
      { title: 'Run failed: nightly', body: 'Run r-42: disk full' },
    ]);
    await page.close();
  });

  it("keeps another origin's scripts out of the page", async () => {
    const { page } = await openPage();
    const violation = page.evaluate(`new Promise((resolveViolation) => {
      document.addEventListener('securitypolicyviolation', (e) => resolveViolation(e.violatedDirective));
      const script = document.createElement('script');
      script.src = '${otherBase}/evil.js';
      document.body.append(script);
    })`);
    expect(await violation).toBe('script-src-elem');
    expect(await page.evaluate('window.foreign')).toBeUndefined();
    await page.close();
  });

  it('refuses calls from a page of another origin', async () => {
    const page = await browser.newPage();
    await page.exposeBinding('__desktopIpc', async (source, channel: string, args: unknown[]) =>
      electron.invoke(channel, source.frame.url(), ...args),
    );
    await page.goto(`${otherBase}/`);
    const refused = await page.evaluate(
      "window.__desktopIpc('runner-desktop:choose-connection', []).then(() => 'answered', (e) => e.message)",
    );
    expect(refused).toMatch(/refused a call from http:\/\/127\.0\.0\.1:\d+\/: only http:\/\/127\.0\.0\.1:\d+ may call/);
    await page.close();
  });
});
