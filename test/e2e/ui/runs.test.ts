// The run view and the new-run form in Debian's chromium against a real master (auth on): a long
// log opens at its tail and reads older pages when scrolled up, searches on the server and
// downloads the whole log; screenshots of the run view light and dark at both sizes.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context, launch, logIn, screenshot, seriousViolations, watch, type Session } from './browser.js';
import { Fleet, runWorkflow, type Master } from './fleet.js';

const fleet = new Fleet();
let master: Master;
let browser: Browser;
let admin: Session;

beforeAll(async () => {
  master = await fleet.master();
  browser = await launch();
  admin = await logIn(browser, master.origin, 'admin', master.adminPassword);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await fleet.stop();
});

async function open(
  path: string,
  options: { theme?: 'light' | 'dark'; viewport?: 'desktop' | 'phone'; session?: Session } = {},
): Promise<{ page: Page; problems: string[] }> {
  const ctx = await context(browser, { origin: master.origin, session: options.session ?? admin, ...options });
  const page = await ctx.newPage();
  const { problems } = watch(page);
  await page.goto(path);
  return { page, problems };
}

const shownMessages = (page: Page) => page.locator('[role=log] .msg').allTextContents();

describe('the run log, tail first', () => {
  const LINES = 3000;
  let id = '';
  beforeAll(async () => {
    const content = `version: "1.0"\ntasks:\n  - name: chatty\n    exec:\n      script: |\n        for i = 1, ${LINES} do log.info("line " .. i) end\n        return true\n  - name: after\n    depends_on: [chatty]\n    exec: { script: 'log.warn("the end"); return true' }\n`;
    ({ id } = await runWorkflow(master, content, 'long-log'));
  }, 60_000);

  it('opens at the last line, reads older pages as it is scrolled up, and searches on the server', async () => {
    const { page, problems } = await open(`/executions/${id}`);
    const log = page.getByRole('log', { name: 'Log of the run' });
    await log.getByText('the end').waitFor();
    // Only the tail page was read: line 1 is not in the page yet.
    const status = page.getByRole('status').filter({ hasText: 'lines' });
    expect(await status.textContent()).toContain(`${(LINES + 1).toLocaleString('en-US')} of`);
    const requests: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/log?')) requests.push(r.url());
    });
    // Scroll to the top until the first line shows: each step reads one older page.
    for (let i = 0; i < 20 && !(await shownMessages(page)).includes('line 1'); i++) {
      await log.evaluate((box) => (box.scrollTop = 0));
      await page.waitForTimeout(150);
    }
    expect(await shownMessages(page)).toContain('line 1');
    expect(requests.length).toBeGreaterThanOrEqual(Math.floor(LINES / 500) - 1);
    expect(requests.every((u) => /before=\d+/.test(u))).toBe(true);

    await page.getByRole('searchbox').fill('line 299');
    await expect.poll(() => status.textContent()).toContain('11 of');
    expect(await shownMessages(page)).toEqual([
      'line 299',
      ...Array.from({ length: 10 }, (_, i) => `line ${2990 + i}`),
    ]);
    const href = await page.getByRole('link', { name: 'Download' }).getAttribute('href');
    expect(href).toBe(`/api/v1/executions/${id}/log?format=text&q=line+299`);
    // The download is the server's, with the session cookie.
    const text = await page.evaluate(async (url) => (await fetch(url)).text(), href as string);
    expect(text.trimEnd().split('\n')).toHaveLength(11);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  for (const theme of ['light', 'dark'] as const) {
    for (const viewport of ['desktop', 'phone'] as const) {
      it(`looks right in ${theme} at ${viewport} size`, async () => {
        const { page, problems } = await open(`/executions/${id}`, { theme, viewport });
        await page.getByRole('log').getByText('the end').waitFor();
        await screenshot(page, `run-view-${theme}-${viewport}`);
        expect(await seriousViolations(page)).toEqual([]);
        expect(problems).toEqual([]);
        await page.context().close();
      });
    }
  }
});
