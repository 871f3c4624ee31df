// The app's connections page (static/connections.html) in Debian's Chromium, from its file URL as
// Electron loads it, with the built preload-connections.cjs and its calls answered by the real
// handlers over a real ConnectionStore in a temporary directory.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { injectPreload, launchChromium } from './chromium-support.js';
import { registerConnectionsHandlers } from './connections-ipc.js';
import { ConnectionStore, EMBEDDED } from './connections.js';
import { fakeElectron, type FakeElectron } from './fake-electron.js';

const pageUrl = pathToFileURL(resolve(import.meta.dirname, '..', 'static', 'connections.html')).href;
let dir: string;
let browser: Browser;
let electron: FakeElectron;
let store: ConnectionStore;
const opened: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'runner-desktop-connections-page-'));
  electron = fakeElectron(dir);
  store = await ConnectionStore.open(dir, electron.safeStorage);
  registerConnectionsHandlers({
    ipcMain: electron.ipcMain,
    pageUrl,
    store,
    connections: () => [{ id: EMBEDDED, name: 'Embedded master', url: 'http://127.0.0.1:4000' }, ...store.list()],
    current: () => EMBEDDED,
    open: async (id) => void opened.push(id),
    removed: async () => undefined,
    changed: () => undefined,
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await rm(dir, { recursive: true, force: true });
});

async function openPage(): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (m) => void (m.type() === 'error' && problems.push(m.text())));
  page.on('pageerror', (e) => problems.push(e.message));
  await injectPreload(page, electron, undefined, 'preload-connections.cjs');
  await page.goto(pageUrl);
  await page.getByRole('list', { name: 'Saved masters' }).getByRole('listitem').first().waitFor();
  return { page, problems };
}

describe('the connections page', () => {
  it('lists, adds, opens and removes saved masters through its bridge', async () => {
    const { page, problems } = await openPage();
    const items = page.getByRole('list', { name: 'Saved masters' }).getByRole('listitem');
    expect(await items.allTextContents()).toEqual(['Embedded master (http://127.0.0.1:4000) · shownOpen']);
    expect(await page.evaluate('typeof require + typeof process')).toBe('undefinedundefined');

    await page.getByLabel('Name').fill('lab');
    await page.getByLabel('URL').fill('https://lab.example:8443/api/v1');
    await page.getByLabel('API token (optional)').fill('rnr_lab_token');
    await page.getByRole('button', { name: 'Add' }).click();
    await items.nth(1).waitFor();
    expect(await items.nth(1).textContent()).toBe('lab (https://lab.example:8443)OpenRemove');
    expect(await page.getByLabel('Name').inputValue()).toBe('');
    const saved = store.list();
    expect(saved).toEqual([{ id: expect.any(String), name: 'lab', url: 'https://lab.example:8443' }]);
    expect(store.authorization(saved[0].id)).toBe('Bearer rnr_lab_token');
    expect(await readFile(join(dir, 'connections.json'), 'utf8')).not.toContain('rnr_lab_token');

    await page.getByRole('button', { name: 'Open lab' }).click();
    await expect.poll(() => opened, { timeout: 10_000 }).toEqual([saved[0].id]);

    await page.getByRole('button', { name: 'Remove lab' }).click();
    await expect.poll(() => items.count(), { timeout: 10_000 }).toBe(1);
    expect(store.list()).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("shows the main process's error where the user looks", async () => {
    const { page } = await openPage();
    await page.getByLabel('Name').fill('bad');
    await page.getByLabel('URL').fill('ftp://files.example');
    await page.getByRole('button', { name: 'Add' }).click();
    const alert = page.getByRole('alert');
    await expect
      .poll(() => alert.textContent())
      .toBe('connection URL "ftp://files.example" must be http:// or https://');
    expect(store.list()).toEqual([]);
    await page.close();
  });
});
