// Chromium for the desktop tests: Debian's browser driven by playwright-core, and the built
// preload run in a page the way Electron runs it: before the page, with `require('electron')`
// answering a contextBridge and an ipcRenderer whose calls reach the shell's IPC handlers
// (registered on the fake facade) with the calling frame's URL.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM_OPTIONS } from '../../test/support/chromium-broker.js';
import type { FakeElectron } from './fake-electron.js';

/** Debian's chromium with the flags every browser test uses (one list, the broker's). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch(CHROMIUM_OPTIONS);
}

/**
 * Runs dist/preload.cjs before every document of `page`, wired to `electron`'s IPC handlers.
 * `senderUrl` maps the calling frame's URL to the one Electron would report (a test that serves
 * the master through a proxy maps the proxy's URLs back to the master's).
 */
export async function injectPreload(
  page: Page,
  electron: FakeElectron,
  senderUrl: (url: string) => string = (url) => url,
  preloadFile = 'preload.cjs',
): Promise<void> {
  const preload = readFileSync(resolve(import.meta.dirname, '..', 'dist', preloadFile), 'utf8');
  await page.exposeBinding('__desktopIpc', async (source, channel: string, args: unknown[]) =>
    electron.invoke(channel, senderUrl(source.frame.url()), ...args),
  );
  await page.addInitScript({
    content: `(function (require) {\n${preload}\n})(function (name) {
      if (name !== 'electron') throw new Error('a sandboxed preload cannot require ' + name);
      const ipc = window.__desktopIpc;
      return {
        contextBridge: { exposeInMainWorld: (key, api) => Object.defineProperty(window, key, { value: api, enumerable: true }) },
        ipcRenderer: { invoke: (channel, ...args) => ipc(channel, args) },
      };
    });`,
  });
}
