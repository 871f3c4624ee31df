// The run page on the kit, in Debian's chromium against a real master and a real agent: a Gantt
// chart with a row per task by agent (retries shown, a 200-task run readable in its scrolling
// chart), the task list that folds, filters by status in the URL and jumps to a task's log, a
// running run's elapsed time and task progress, and Cancel behind a confirm dialog. Screenshots
// `run-page-*` in light and dark, desktop and phone.
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { type Look, looks, screenshot, seriousViolations } from './browser.js';
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
    await expect.poll(() => taskItems(page).count()).toBe(TASKS);
    await page.getByRole('group', { name: 'Show tasks by status' }).getByRole('button', { name: 'failed 1' }).click();
    await page.waitForURL((url) => url.searchParams.get('tasks') === 'failed');
    await expect.poll(() => taskItems(page).count()).toBe(1);
    expect(await taskItems(page).first().textContent()).toContain('flaky');
    // The filter is in the URL: a reload keeps it.
    await page.reload();
    await expect.poll(() => taskItems(page).count()).toBe(1);

    await page.getByRole('button', { name: 'Log of flaky' }).click();
    await expect.poll(() => page.getByRole('combobox', { name: /^Task/ }).inputValue()).toBe('flaky');
    const log = page.getByRole('log', { name: 'Log of the run' });
    await log.getByText('flaky tries').first().waitFor();
    expect(await log.getByText('work of step').count()).toBe(0);
    await screenshot(page, 'run-page-task-log-light-desktop');

    // The list folds away.
    await page.getByText('Tasks (200)').click();
    await expect.poll(() => taskItems(page).first().isVisible()).toBe(false);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('shows a running run’s elapsed time and progress, and cancels it after a confirm', async () => {
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
    ].join('\n');
    const { id } = await apiCall<{ id: string }>(ui.master, 'POST', '/workflows/run', {
      content,
      workflow_name: 'slow-one',
    });
    const { page, problems } = await ui.open(`/executions/${id}`);
    const facts = page.locator('dl.facts');
    await facts.getByText('1 done · 1 running').waitFor({ timeout: 30_000 });
    const elapsedValue = facts.locator('div').filter({ hasText: 'Elapsed' }).locator('dd');
    await expect.poll(() => elapsedValue.textContent(), { timeout: 20_000 }).toMatch(/^([1-9]\d*s|\d+m \d+s)$/);
    await screenshot(page, 'run-page-running-light-desktop');

    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel this run of slow-one?' });
    await dialog.waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Cancel the run' }).click();
    await page.getByText('Cancelled by', { exact: true }).waitFor({ timeout: 30_000 });
    await facts.locator('div').filter({ hasText: 'Duration' }).waitFor();
    expect((await apiCall<{ status: string }>(ui.master, 'GET', `/executions/${id}`)).status).toBe('cancelled');
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
