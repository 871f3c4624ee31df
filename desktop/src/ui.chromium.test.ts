// The web UI inside the shell's constraints, in Debian's Chromium: the shell (fake facade) starts
// a real embedded master, whose ui plugin serves the built UI; the page gets the master's
// credential as the shell adds it (no login), the shell's Content-Security-Policy on every
// response, and the built preload bridge. Every page of the UI must load with no console error
// and no failed request. Runs when the build has the ui plugin (plugins/ui, ui/build).
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { injectPreload, launchChromium } from './chromium-support.js';
import { fakeElectron, type FakeElectron } from './fake-electron.js';
import { DesktopShell } from './shell.js';

const root = resolve(import.meta.dirname, '..', '..');
const uiBuilt = existsSync(join(root, 'plugins', 'ui')) && existsSync(join(root, 'ui', 'build', 'index.html'));
const PAGES = ['/', '/agents', '/agent-control', '/executions', '/logs', '/settings'];

let userData: string;
let electron: FakeElectron;
let shell: DesktopShell | undefined;
let browser: Browser | undefined;
let base: string;

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
    trayIconPath: join(root, 'desktop', 'build', 'tray.png'),
    log: () => undefined,
    trayIntervalMs: 60_000,
  });
  base = shell!.current!.url;
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
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
    await page.route(`${base}/**`, async (route) => {
      const response = await route.fetch();
      const multi = Object.fromEntries(Object.entries(response.headers()).map(([k, v]) => [k, [v]]));
      const headers = electron.receiveHeaders(route.request().url(), multi);
      // Several policies in one header are separated by commas; each is enforced.
      await route.fulfill({
        response,
        headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v.join(', ')])),
      });
    });
    await injectPreload(page, electron);
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('requestfailed', (request) => problems.push(`failed: ${request.url()} ${request.failure()?.errorText}`));
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`HTTP ${response.status()}: ${response.url()}`);
    });

    for (const path of PAGES) {
      await page.goto(`${base}${path}`);
      await page.waitForLoadState('networkidle');
      // Signed in through the shell's credential: no detour to the login page.
      expect(new URL(page.url()).pathname).toBe(path);
      expect(await page.locator('main').count()).toBeGreaterThan(0);
      expect(await page.evaluate('typeof window.runnerDesktop.openWorkflowFile')).toBe('function');
    }
    expect(problems).toEqual([]);
    await context.close();
  });
});
