// The run view and the new-run form in Debian's chromium against a real master (auth on): a long
// log opens at its tail and reads older pages when scrolled up, searches on the server and
// downloads the whole log; streams a running run's log; screenshots of the running run light and
// dark at both sizes.
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { context, looks, screenshot, watch } from './browser.js';
import { apiCall, runWorkflow } from './fleet.js';
import { uiSuite } from './suite.js';

const ui = uiSuite();
const { open } = ui;

const shownMessages = (page: Page) => page.locator('[role=log] .line .msg').allTextContents();

describe('the run log, tail first', () => {
  const LINES = 3000;
  let id = '';
  beforeAll(async () => {
    const content = `version: "1.0"\ntasks:\n  - name: chatty\n    exec:\n      script: |\n        for i = 1, ${LINES} do log.info("line " .. i) end\n        return true\n  - name: after\n    depends_on: [chatty]\n    exec: { script: 'log.warn("the end"); return true' }\n`;
    ({ id } = await runWorkflow(ui.master, content, 'long-log'));
  }, 60_000);

  it('opens at the last line, reads older pages as it is scrolled up, and searches on the server', async () => {
    const { page, problems } = await open(`/executions/${id}`);
    const log = page.getByRole('log', { name: 'Log of the run' });
    await log.getByText('the end').waitFor();
    // A long log at its tail, for the eye (the run view's four looks, axe in each, are the
    // streaming run's below and pages.test.ts's finished run's).
    await screenshot(page, 'run-view-tail-light-desktop');
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
    // The count can show a frame before the rows of the new page are drawn.
    await expect
      .poll(() => shownMessages(page))
      .toEqual(['line 299', ...Array.from({ length: 10 }, (_, i) => `line ${2990 + i}`)]);
    const href = await page.getByRole('link', { name: 'Download' }).getAttribute('href');
    expect(href).toBe(`/api/v1/executions/${id}/log?format=text&q=line+299`);
    // The download is the server's, with the session cookie.
    const text = await page.evaluate(async (url) => (await fetch(url)).text(), href as string);
    expect(text.trimEnd().split('\n')).toHaveLength(11);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('a running run', () => {
  // Enough ticks that the search below (matching "tick 2" and 20 to 29) opens while they still
  // come: 6 s of them, which the test waits out before its looks of the live view.
  const TICKS = 30;
  // Two tasks at once, whose lines interleave as they are written (10 lines a second in all, so
  // that the first ones are still in the view's window when the page has loaded).
  const ticker = [
    'version: "1.0"',
    'parallel: 2',
    'tasks:',
    '  - name: ticker',
    '    exec:',
    '      script: |',
    `        for i = 1, ${TICKS} do log.info("tick " .. i); goroutine.sleep("200ms") end`,
    '        log.info("waiting")',
    '        goroutine.sleep("60s")',
    '  - name: tocker',
    '    exec:',
    '      script: |',
    `        for i = 1, ${TICKS} do log.info("tock " .. i); goroutine.sleep("200ms") end`,
    '        goroutine.sleep("60s")',
  ].join('\n');

  it('streams its log lines as they are written (no polling), filtered on the server, and keeps that order after the run', async () => {
    const { id } = await apiCall<{ id: string }>(ui.master, 'POST', '/workflows/run', {
      content: ticker,
      workflow_name: 'ticker',
    });
    const ctx = await context(ui.browser, { origin: ui.master.origin, session: ui.admin });
    const page = await ctx.newPage();
    const { problems } = watch(page);
    const pages: string[] = [];
    const streams: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/log?')) pages.push(r.url());
      if (r.url().includes('/log/stream')) streams.push(r.url());
    });
    await page.goto(`/executions/${id}`);
    const log = page.getByRole('log', { name: 'Log of the run' });
    // The first tick shown: on a busy machine the page may open after several, and the viewer
    // follows the tail (an early line such as tick 3 can already be scrolled out of its window).
    await log
      .getByText(/^tick \d+$/)
      .first()
      .waitFor();
    // Two reads of the tail: the page's first, and the one the stream's `ready` asks for.
    await expect.poll(() => pages.length).toBe(2);
    // Lines keep coming while no page of the log is read again: they are pushed.
    await log.getByText('tick 15', { exact: true }).waitFor();
    expect(pages.length).toBe(2);
    expect(streams).toHaveLength(1);
    // Every line once, in order, the viewer following the tail.
    await expect.poll(() => shownMessages(page)).toContain('tick 15');
    // What the stream showed: the two tasks' lines interleaved, each task's in order.
    const live = (await shownMessages(page)).filter((m) => /^t[io]ck \d+$/.test(m));
    const numbers = live.filter((m) => m.startsWith('tick ')).map((m) => Number(m.slice(5)));
    expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => numbers[0] + i));
    const firstTock = live.findIndex((m) => m.startsWith('tock '));
    expect(firstTock, live.join(', ')).toBeGreaterThan(-1);
    expect(
      live.slice(firstTock).some((m) => m.startsWith('tick ')),
      live.join(', '),
    ).toBe(true);

    // A search opens the stream again with the filter: later matching lines arrive, others do not.
    await page.getByRole('searchbox').fill('tick 2');
    await expect
      .poll(() => shownMessages(page), { timeout: 15_000 })
      .toEqual(['tick 2', ...Array.from({ length: 10 }, (_, i) => `tick ${20 + i}`)]);
    expect(streams.length).toBe(2);
    expect(streams[1]).toContain('q=tick+2');
    await page.getByRole('searchbox').fill('');
    await log.getByText('waiting', { exact: true }).waitFor();
    // The live view in both themes at both sizes, while the run still goes on.
    expect(await looks(page, 'run-view-streaming')).toEqual([]);

    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel the run' }).click();
    await page.getByText('Cancelled by', { exact: true }).waitFor({ timeout: 20_000 });
    const final = await apiCall<{ total: number; lines: { message: string }[] }>(
      ui.master,
      'GET',
      `/executions/${id}/log?tail=1000`,
    );
    const status = page.getByRole('status').filter({ hasText: 'lines' });
    await expect.poll(() => status.textContent()).toBe(`${final.total} of ${final.total} lines`);
    // The stored log holds what the stream showed in the same order: write order, not task by task.
    const stored = final.lines.map((l) => l.message).filter((m) => /^t[io]ck \d+$/.test(m));
    const at = stored.indexOf(live[0]!);
    expect(stored.slice(at, at + live.length)).toEqual(live);
    expect(problems).toEqual([]);
    await ctx.close();
  }, 60_000);
});

describe('run again', () => {
  it('starts the same workflow with the same inputs from a finished run, as the user who clicked', async () => {
    const content =
      'version: "1.0"\nvars: { who: nobody }\ntasks:\n  - name: greet\n    exec: { script: \'return true, "hi " .. vars.who\' }\n';
    const { id } = await apiCall<{ id: string }>(ui.master, 'POST', '/workflows/run', {
      content,
      workflow_name: 'greeter',
      vars: { who: 'there' },
    });
    await runWorkflowEnd(id);
    const { page, problems } = await open(`/executions/${id}`);
    await page.getByRole('button', { name: 'Run again' }).click();
    await page.waitForURL((url) => url.pathname.startsWith('/executions/') && !url.pathname.endsWith(id));
    await page.getByText('Run again of', { exact: true }).waitFor();
    const again = decodeURIComponent(new URL(page.url()).pathname.split('/').pop() as string);
    const run = await runWorkflowEnd(again);
    expect(run).toMatchObject({ workflow_name: 'greeter', rerun_of: id, user: 'admin', trigger: 'api' });
    expect(run.tasks).toMatchObject([{ name: 'greet', message: 'hi there' }]);
    await page.getByRole('link', { name: id }).waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('validate before running', () => {
  const bad = [
    'version: "1.0"',
    'tasks:',
    '  - name: ok',
    '    exec: { script: "return true" }',
    '  - nme: typo',
    '    exec: { script: "return true" }',
  ].join('\n');

  it('shows each problem at its line in the editor and starts nothing', async () => {
    const before = (await apiCall<{ total: number }>(ui.master, 'GET', '/executions?limit=1')).total;
    const { page, problems } = await open('/executions?new=1');
    const form = page.getByRole('form', { name: 'New run' });
    const editor = form.getByLabel('Workflow', { exact: true });
    await editor.fill(bad);
    // CodeMirror: numbered lines, YAML highlighted.
    expect(await form.locator('.cm-lineNumbers .cm-gutterElement').allTextContents()).toEqual(
      expect.arrayContaining(['1', '6']),
    );
    expect(await form.locator('.cm-line').count()).toBe(6);
    await form.getByRole('button', { name: 'Start' }).click();
    const list = form.getByRole('list', { name: 'Problems with their lines' });
    await list.waitFor();
    expect(await list.locator('li').first().textContent()).toMatch(/Error at line 5, column \d+:.*nme/);
    // Both problems (unknown key, missing name) are marked at line 5: underlined, one gutter marker.
    const marked = form.locator('.cm-line').nth(4).locator('.cm-lintRange-error').first();
    await marked.waitFor();
    expect(await marked.textContent()).toContain('nme');
    expect(await form.locator('.cm-lint-marker-error').count()).toBe(1);
    expect(await editor.getAttribute('aria-invalid')).toBe('true');
    // Clicking the problem selects its line in the editor.
    await list
      .getByRole('button', { name: /Error at line 5/ })
      .first()
      .click();
    expect(await page.evaluate('getSelection().toString()')).toBe('  - nme: typo');
    expect((await apiCall<{ total: number }>(ui.master, 'GET', '/executions?limit=1')).total).toBe(before);
    // Hovering the mark shows the message.
    await marked.hover();
    await page.locator('.cm-tooltip-lint').getByText(/nme/).first().waitFor();
    // A valid workflow checks clean, its marks go, and it says what would run.
    await editor.fill(bad.replace('nme', 'name'));
    await form.getByRole('button', { name: 'Check' }).click();
    await form.getByText('Valid: 2 tasks would run (ok, typo).').waitFor();
    expect(await form.locator('.cm-lintRange-error').count()).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('shows problems legibly in both themes at both sizes', async () => {
    const { page, problems } = await open('/executions?new=1');
    const form = page.getByRole('form', { name: 'New run' });
    await form.getByLabel('Workflow', { exact: true }).fill(bad);
    await form.getByRole('button', { name: 'Start' }).click();
    await form.getByRole('list', { name: 'Problems with their lines' }).waitFor();
    await form.locator('.cm-lintRange-error').waitFor();
    expect(await looks(page, 'new-run-problems', { show: form.locator('.cm-editor') })).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

/** Waits for a run to end and answers it without its logs. */
async function runWorkflowEnd(id: string): Promise<Record<string, unknown> & { tasks: unknown[] }> {
  for (let i = 0; i < 300; i++) {
    const run = await apiCall<Record<string, unknown> & { tasks: unknown[] }>(
      ui.master,
      'GET',
      `/executions/${id}?log=false`,
    );
    if (run.status !== 'running') return run;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${id} still running`);
}
