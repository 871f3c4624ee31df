// The run page on the kit, in Debian's chromium against a real master and a real agent: a Gantt
// chart with a row per task by agent (retries shown, a 200-task run readable in its scrolling
// chart), the task list that folds, filters by status in the URL and jumps to a task's log, a
// running run's elapsed time and `n of N tasks` (run page, executions list, dashboard) with the
// tasks not started yet, Cancel behind a confirm dialog and the stopped task shown `cancelled`; the
// Gantt legend in the bars' colours; the run's inputs, workflow and outputs in a detail view with
// tabs. Screenshots `run-page-*` in light and dark, desktop and phone.
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { type Look, looks, screenshot, seriousViolations, setLook } from './browser.js';
import { apiCall, runWorkflow } from './fleet.js';
import { uiSuite } from './suite.js';

// Pages of a master shared with other work on two cores: generous ceilings.
vi.setConfig({ testTimeout: 120_000 });

const ui = uiSuite({ agents: ['gantt-1'], timeoutMs: 120_000 });
const TASKS = 200;
let bigRun = '';

/** 200 small tasks, a few on the agent, one retried and failing, one ignored by a `when`. */
function bigWorkflow(): string {
  const lines = ['version: "1.0"', 'tasks:'];
  for (let i = 1; i <= TASKS - 1; i++) {
    lines.push(`  - name: step-${String(i).padStart(3, '0')}`);
    if (i % 50 === 0) lines.push('    delegate_to: gantt-1');
    lines.push('    exec:', `      script: 'log.info("work of step ${i}"); return true'`);
  }
  lines.push(
    '  - name: flaky',
    '    retry: { attempts: 2, delay: 100ms }',
    '    exec:',
    `      script: 'log.warn("flaky tries"); error("flaky failed")'`,
  );
  return lines.join('\n');
}

beforeAll(async () => {
  const run = await runWorkflow(ui.master, bigWorkflow(), 'two-hundred');
  bigRun = run.id;
}, 120_000);

const taskItems = (page: Page) => page.locator('ol.tasks > li[data-status]');

describe('the run page', () => {
  it('draws a row per task by agent, with the retried task, readable at 200 tasks', async () => {
    const run = await apiCall<{ tasks: { name: string; agent: string; attempts: number; status: string }[] }>(
      ui.master,
      'GET',
      `/executions/${bigRun}?log=false`,
    );
    expect(run.tasks).toHaveLength(TASKS);
    const { page, problems } = await ui.open(`/executions/${bigRun}`);
    const chart = page.getByRole('list', { name: 'Timeline of tasks by agent' });
    await chart.waitFor();
    // A row per task, in a lane per agent.
    expect(await chart.locator('li.row').count()).toBe(TASKS);
    const agents = [...new Set(run.tasks.map((t) => t.agent))].sort();
    for (const agent of agents) await chart.getByRole('list', { name: `Tasks on ${agent}` }).waitFor();
    const flaky = chart.locator('li.row').filter({ hasText: 'flaky' });
    expect(await flaky.locator('.meta').textContent()).toMatch(/^×2 /);
    // The legend's keys are the bars' colours (one rule draws both), for each status shown, in both themes.
    for (const theme of ['dark', 'light'] as const) {
      await setLook(page, theme, 'desktop');
      const colours = (await page.evaluate(`(() => {
        const bg = (e) => e && getComputedStyle(e).backgroundColor;
        return [...document.querySelectorAll('.legend [data-status]')].map((k) => [
          k.dataset.status, bg(k.querySelector('.bar')), bg(document.querySelector('li.row[data-status="' + k.dataset.status + '"] .bar')),
        ]);
      })()`)) as [string, string, string][];
      expect(colours.map(([status]) => status)).toEqual(['succeeded', 'failed']);
      for (const [status, key, bar] of colours) expect(key, `${theme} ${status}`).toBe(bar);
    }
    // Readable at each size: each row keeps its height, the chart scrolls instead of growing with the run.
    const readable = async ([theme, viewport]: Look) => {
      const box = await chart.boundingBox();
      expect(box!.height, `${theme} ${viewport}`).toBeLessThanOrEqual(28 * 14 + 2);
      expect((await flaky.boundingBox())!.height, `${theme} ${viewport}`).toBeGreaterThanOrEqual(18);
    };
    expect(await looks(page, 'run-page-gantt', { show: chart, check: readable })).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('folds the task list, filters it by status in the URL and jumps to a task’s log', async () => {
    const { page, problems } = await ui.open(`/executions/${bigRun}`);
    // Ceilings far above need: 200 tasks render slowly on a machine busy with other test files.
    const slow = { timeout: 20_000 };
    await expect.poll(() => taskItems(page).count(), slow).toBe(TASKS);
    await page.getByRole('group', { name: 'Show tasks by status' }).getByRole('button', { name: 'failed 1' }).click();
    await page.waitForURL((url) => url.searchParams.get('tasks') === 'failed');
    await expect.poll(() => taskItems(page).count(), slow).toBe(1);
    expect(await taskItems(page).first().textContent()).toContain('flaky');
    // The filter is in the URL: a reload keeps it.
    await page.reload();
    await expect.poll(() => taskItems(page).count(), slow).toBe(1);

    await page.getByRole('button', { name: 'Log of flaky' }).click();
    await expect.poll(() => page.getByRole('combobox', { name: /^Task/ }).inputValue()).toBe('flaky');
    const log = page.getByRole('log', { name: 'Log of the run' });
    await log.getByText('flaky tries').first().waitFor();
    // Lines of the other tasks leave once the filtered log has loaded.
    await expect.poll(() => log.getByText('work of step').count(), slow).toBe(0);
    await screenshot(page, 'run-page-task-log-light-desktop');

    // The list folds away.
    await page.getByText('Tasks (200)').click();
    await expect.poll(() => taskItems(page).first().isVisible()).toBe(false);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('shows a running run’s elapsed time and n of N tasks everywhere, and cancels it after a confirm', async () => {
    const content = [
      'version: "1.0"',
      'tasks:',
      '  - name: quick',
      '    exec: { script: "return true" }',
      '  - name: slow',
      '    depends_on: [quick]',
      '    exec:',
      '      script: |',
      '        goroutine.sleep("120s")',
      '  - name: later',
      '    depends_on: [slow]',
      '    exec: { script: "return true" }',
    ].join('\n');
    const { id } = await apiCall<{ id: string }>(ui.master, 'POST', '/workflows/run', {
      content,
      workflow_name: 'slow-one',
    });
    const { page, problems } = await ui.open(`/executions/${id}`);
    const facts = page.locator('dl.facts');
    await facts.getByText('1 of 3 tasks · 1 running').waitFor({ timeout: 30_000 });
    // The task not started yet is listed, as pending.
    expect(await taskItems(page).filter({ hasText: 'later' }).getAttribute('data-status')).toBe('pending');
    const elapsedValue = facts.locator('div').filter({ hasText: 'Elapsed' }).locator('dd');
    await expect.poll(() => elapsedValue.textContent(), { timeout: 20_000 }).toMatch(/^([1-9]\d*s|\d+m \d+s)$/);
    await screenshot(page, 'run-page-running-light-desktop');

    // The executions list and the dashboard say the same: elapsed time, not 0ms, and n of N.
    const list = await ui.open('/executions');
    const row = list.page.getByRole('row').filter({ hasText: 'slow-one' });
    await row.getByText('1 of 3 tasks').waitFor();
    expect(await row.textContent()).not.toContain('0ms');
    await list.page.context().close();
    const dashboard = await ui.open('/');
    // The latest executions' row (the latest events name the run's tasks too).
    const recent = dashboard.page
      .getByRole('table', { name: 'Latest executions' })
      .getByRole('row')
      .filter({ hasText: 'slow-one' });
    await recent.getByText('1 of 3 tasks').waitFor();
    expect(await recent.textContent()).not.toContain('0ms');
    await screenshot(dashboard.page, 'dashboard-running-light-desktop');
    expect([...list.problems, ...dashboard.problems]).toEqual([]);
    await dashboard.page.context().close();

    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel this run of slow-one?' });
    await dialog.waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Cancel the run' }).click();
    await page.getByText('Cancelled by', { exact: true }).waitFor({ timeout: 30_000 });
    await facts.locator('div').filter({ hasText: 'Duration' }).waitFor();
    const run = await apiCall<{ status: string; tasks: { name: string; status: string }[] }>(
      ui.master,
      'GET',
      `/executions/${id}`,
    );
    expect(run.status).toBe('cancelled');
    // The task the cancel stopped did not fail: it says cancelled, on the page too.
    expect(run.tasks.map((t) => [t.name, t.status])).toEqual([
      ['quick', 'succeeded'],
      ['slow', 'cancelled'],
      ['later', 'skipped'],
    ]);
    await expect.poll(() => taskItems(page).filter({ hasText: 'slow' }).getAttribute('data-status')).toBe('cancelled');
    await screenshot(page, 'run-page-cancelled-light-desktop');
    expect(problems).toEqual([]);
    await page.context().close();
    // The dashboard's 24 h figures count it.
    const after = await ui.open('/');
    await after.page.getByText(/1 cancelled/).waitFor();
    await after.page.context().close();
  });

  it('shows the run’s inputs, workflow and outputs in tabs kept in the URL', async () => {
    const content = [
      'version: "1.0"',
      'vars: { who: nobody }',
      'groups:',
      '  greet: [hello]',
      'tasks:',
      '  - name: hello',
      '    exec:',
      '      script: \'return true, "hi", { greeting = "hello " .. vars.who, count = 3 }\'',
      '  - name: other',
      '    exec: { script: "return true" }',
    ].join('\n');
    const { id } = await apiCall<{ id: string }>(ui.master, 'POST', '/workflows/run', {
      content,
      workflow_name: 'with-inputs',
      vars: { who: 'world' },
      group: 'greet',
      delegate_to: ['gantt-1'],
    });
    const { page, problems } = await ui.open(`/executions/${id}`);
    const details = page.getByRole('region', { name: 'Details' });
    const vars = details.getByRole('table', { name: 'Vars given to this run' });
    await vars.getByRole('row').filter({ hasText: 'who' }).getByText('world').waitFor();
    expect(await details.getByText('greet', { exact: true }).isVisible()).toBe(true);
    expect(await details.getByText('gantt-1', { exact: true }).isVisible()).toBe(true);
    expect(await looks(page, 'run-page-inputs', { show: details })).toEqual([]);
    await details.getByRole('tab', { name: 'Workflow' }).click();
    await page.waitForURL((url) => url.searchParams.get('details') === 'workflow');
    expect(await details.getByLabel('Workflow of this run').textContent()).toBe(content);
    await details.getByRole('tab', { name: 'Outputs' }).click();
    const outputs = details.getByRole('table', { name: 'Outputs of each task' });
    await outputs
      .getByRole('row')
      .filter({ hasText: 'greeting' })
      .getByText('hello world')
      .waitFor({ timeout: 30_000 });
    expect(await outputs.getByRole('row').filter({ hasText: 'count' }).textContent()).toContain('3');
    expect(await looks(page, 'run-page-outputs', { show: details })).toEqual([]);
    // The tab is in the URL: a reload opens it again.
    await page.reload();
    await page.getByRole('table', { name: 'Outputs of each task' }).waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
