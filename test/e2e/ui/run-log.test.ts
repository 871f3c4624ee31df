// The run log's rows in Debian's chromium against a real master: a message holding newlines takes
// as many rows as it has lines and no longer overlaps the lines after it; a long line wraps inside
// the log (on a phone too, where it used to be cut off); a level filter; search and filters kept in
// the URL across a reload. Screenshots `run-log-*` in light and dark, desktop and phone, axe clean.
import type { Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { looks, setLook } from './browser.js';
import { runWorkflow } from './fleet.js';
import { uiSuite } from './suite.js';

// Pages of a master shared with other work on two cores: generous ceilings.
vi.setConfig({ testTimeout: 120_000 });

const ui = uiSuite({ timeoutMs: 120_000 });
let runId = '';
const LONG = Array.from({ length: 40 }, (_, i) => `word${i}`).join('-');

beforeAll(async () => {
  const content = [
    'version: "1.0"',
    'tasks:',
    '  - name: multi',
    '    exec:',
    '      script: |',
    '        log.info("before the block")',
    '        log.warn("first of three\\nsecond of three\\nthird of three")',
    `        log.info("${LONG}")`,
    '        log.error("an error line")',
    '        log.info("after the block")',
  ].join('\n');
  runId = (await runWorkflow(ui.master, content, 'multi-line')).id;
}, 60_000);

/** What the test reads of an element in the page (its own TypeScript has no DOM types). */
interface Measured {
  scrollWidth: number;
  clientWidth: number;
  scrollHeight: number;
  parentElement: { clientHeight: number };
  getBoundingClientRect(): { right: number };
}

const line = (log: Locator, text: string) => log.locator('.line').filter({ hasText: text });

/** Each line of the log lies below the one before it, and inside the log's width. */
async function expectNoOverlap(page: Page, log: Locator, texts: string[]) {
  const logBox = (await log.boundingBox())!;
  let bottom = -Infinity;
  for (const text of texts) {
    const box = (await line(log, text).boundingBox())!;
    expect(box.y, `${text} starts below the line before`).toBeGreaterThanOrEqual(bottom - 1);
    bottom = box.y + box.height;
    // Its message is drawn whole: nothing scrolls sideways or spills past the row's height.
    const overflow = await line(log, text)
      .locator('.msg')
      .evaluate((m: Measured) => ({
        x: m.scrollWidth - m.clientWidth,
        y: m.scrollHeight - m.parentElement.clientHeight,
        right: m.getBoundingClientRect().right,
      }));
    expect(overflow.x, `${text} fits the width`).toBeLessThanOrEqual(1);
    expect(overflow.y, `${text} fits its rows`).toBeLessThanOrEqual(1);
    expect(overflow.right).toBeLessThanOrEqual(logBox.x + logBox.width + 1);
  }
  void page;
}

describe('the run log', () => {
  it('gives multi-line and long messages their own rows, wrapped and overlapping nothing, at both sizes', async () => {
    const { page, problems } = await ui.open(`/executions/${runId}`);
    const log = page.getByRole('log', { name: 'Log of the run' });
    await line(log, 'after the block').waitFor();
    const texts = ['before the block', 'first of three', 'word0-', 'an error line', 'after the block'];
    const block = line(log, 'first of three');
    expect((await block.boundingBox())!.height).toBeGreaterThanOrEqual(3 * 20 - 1);
    expect(await block.textContent()).toContain('third of three');
    await expectNoOverlap(page, log, texts);
    await setLook(page, 'light', 'phone');
    // On a phone the long line wraps onto several rows instead of being cut off at the edge.
    await expect.poll(async () => (await line(log, 'word0-').boundingBox())!.height).toBeGreaterThanOrEqual(3 * 20);
    await expectNoOverlap(page, log, texts);
    expect(await line(log, 'word0-').textContent()).toContain('word39');
    expect(await looks(page, 'run-log-multiline', { show: log })).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('filters by level, keeps search and filters in the URL across a reload', async () => {
    const { page, problems } = await ui.open(`/executions/${runId}`);
    const log = page.getByRole('log', { name: 'Log of the run' });
    await line(log, 'after the block').waitFor();
    await page.getByLabel('Level').selectOption('warn');
    await page.waitForURL((url) => url.searchParams.get('log_level') === 'warn');
    await expect.poll(() => log.locator('.line').count()).toBe(2);
    expect(await line(log, 'first of three').count()).toBe(1);
    expect(await line(log, 'an error line').count()).toBe(1);
    await page.getByRole('searchbox', { name: 'Search' }).fill('error');
    await page.waitForURL((url) => url.searchParams.get('log_q') === 'error');
    await expect.poll(() => log.locator('.line').count()).toBe(1);
    await page.reload();
    await line(page.getByRole('log', { name: 'Log of the run' }), 'an error line').waitFor();
    expect(await page.getByLabel('Level').inputValue()).toBe('warn');
    expect(await page.getByRole('searchbox', { name: 'Search' }).inputValue()).toBe('error');
    await expect.poll(() => log.locator('.line').count()).toBe(1);
    await page.getByText('1 of 5 lines').waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
