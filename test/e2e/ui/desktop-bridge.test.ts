// The UI inside the desktop app: the desktop's real preload (desktop/dist/preload.cjs, injected as
// Electron runs it, by the desktop tests' own helper) gives the page `window.runnerDesktop`; the
// main-process side of its IPC is this test, which records the calls and answers them. The UI
// opens a workflow file through it, raises a notification when a run fails, and offers to switch
// masters.
import { expect, it } from 'vitest';
import { injectPreload } from '../../../desktop/src/chromium-support.js';
import type { FakeElectron } from '../../../desktop/src/fake-electron.js';
import { context, watch } from './browser.js';
import { uiSuite } from './suite.js';

const ui = uiSuite({ timeoutMs: 60_000 });

it('opens a workflow file, notifies a failed run and switches masters through the desktop bridge', async () => {
  const calls: { channel: string; url: string; args: unknown[] }[] = [];
  const file = {
    name: 'deploy.yaml',
    path: '/home/op/deploy.yaml',
    content: 'version: "1.0"\ntasks:\n  - name: breaks\n    exec:\n      script: error("disk full")\n',
  };
  const main = {
    invoke: async (channel: string, url: string, ...args: unknown[]) => {
      calls.push({ channel, url, args });
      if (channel === 'runner-desktop:open-workflow-file') return file;
      return null;
    },
  } as unknown as FakeElectron;
  const ctx = await context(ui.browser, { origin: ui.master.origin, session: ui.admin });
  const page = await ctx.newPage();
  await injectPreload(page, main);
  const { problems } = watch(page);

  await page.goto('/executions?new=1');
  await page.getByRole('button', { name: 'Open workflow file…' }).click();
  const form = page.getByRole('form', { name: 'New run' });
  // The editor (CodeMirror) holds the file's text, one element a line.
  await expect
    .poll(async () =>
      (await form.getByLabel('Workflow', { exact: true }).locator('.cm-line').allTextContents()).join('\n'),
    )
    .toBe(file.content);
  expect(await form.getByLabel('Name (optional)').inputValue()).toBe('deploy');
  await form.getByRole('button', { name: 'Start' }).click();
  await page.waitForURL(/\/executions\/[^/?]+$/);
  const runId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
  await expect.poll(() => calls.find((c) => c.channel === 'runner-desktop:notify-run-failed')).toBeTruthy();
  expect(calls.find((c) => c.channel === 'runner-desktop:notify-run-failed')!.args[0]).toMatchObject({
    runId,
    workflow: 'deploy',
  });

  await page.getByRole('button', { name: 'Switch master' }).click();
  await expect.poll(() => calls.some((c) => c.channel === 'runner-desktop:choose-connection')).toBe(true);
  // Every call came from the master's own pages.
  expect(calls.every((c) => c.url.startsWith(ui.master.origin))).toBe(true);
  expect(problems).toEqual([]);
  await ctx.close();
});
