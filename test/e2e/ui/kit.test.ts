// The UI kit (ui/src/lib/kit) on the pages ported to it, in Debian's chromium against a real master
// and real agents: the list view's selection (boxes that show it, select-all, shift ranges, kept in
// the URL), sorting in the URL, bulk actions behind a confirm dialog (rows as cards on a phone, and
// the selected agent-control page in each look, are pages.test.ts's agent-control page); the
// warning before running a command on offline agents; running runs' elapsed time; the page for a
// service.md address whose feature is not built yet; and the contrast of primary buttons when
// hovered and focused (WCAG AA, both themes). Screenshots `kit-*` in light and dark, desktop and phone.
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { repoRoot, tempDataDir } from '../helpers.js';
import { looks, screenshot, seriousViolations, setLook } from './browser.js';
import { apiCall, runWorkflow } from './fleet.js';
import { uiSuite } from './suite.js';

// Each test drives pages on a master shared with other work on two cores: generous ceilings.
vi.setConfig({ testTimeout: 90_000 });

// A third party's plugin beside the built-in ones (copied out of the repository, as it would be
// installed): the notes fixture, which contributes a dashboard tile.
const pluginsDir = join(tempDataDir('runner-ui-kit-plugins-'), 'plugins');
cpSync(join(repoRoot, 'test/fixtures/external-plugins/notes'), join(pluginsDir, 'notes'), { recursive: true });

const ui = uiSuite({
  agents: ['ctl-1', 'ctl-2', 'ctl-3', 'gone'],
  env: { RUNNER_PLUGINS_DIR: pluginsDir },
  timeoutMs: 120_000,
});

const box = (page: Page, name: string) => page.getByRole('checkbox', { name: `Select ${name}`, exact: true });
const selectAll = (page: Page) => page.getByRole('checkbox', { name: /^Select all \d+ shown$/ });

async function checkedBoxes(page: Page, names: string[]): Promise<string[]> {
  const on: string[] = [];
  for (const name of names) if (await box(page, name).isChecked()) on.push(name);
  return on;
}

/** What the functions run in the page use of it (the test's own TypeScript has no DOM types). */
interface InPage {
  getComputedStyle(element: unknown): { display: string; color: string; backgroundColor: string; outlineColor: string };
  document: { body: unknown };
}

const AGENTS = ['ctl-1', 'ctl-2', 'ctl-3', 'gone'];

describe('the list view on agent control', () => {
  it('shows the selection in its boxes, selects all shown from the header and ranges with shift', async () => {
    const { page, problems } = await ui.open('/agent-control');
    await box(page, 'ctl-1').waitFor();
    await box(page, 'ctl-1').click();
    await page.waitForURL((url) => url.searchParams.get('selected') === 'ctl-1');
    await page.getByText('1 selected', { exact: true }).waitFor();
    expect(await checkedBoxes(page, AGENTS)).toEqual(['ctl-1']);

    // A shift-click on a later box selects every row between the two.
    await box(page, 'ctl-3').click({ modifiers: ['Shift'] });
    await page.waitForURL((url) => url.searchParams.get('selected') === 'ctl-1,ctl-2,ctl-3');
    expect(await checkedBoxes(page, AGENTS)).toEqual(['ctl-1', 'ctl-2', 'ctl-3']);
    // Some selected: the header box is mixed.
    expect(await selectAll(page).evaluate((el) => (el as unknown as { indeterminate: boolean }).indeterminate)).toBe(
      true,
    );

    await selectAll(page).click();
    await page.getByText('4 selected', { exact: true }).waitFor();
    expect(await checkedBoxes(page, AGENTS)).toEqual(AGENTS);
    expect(await selectAll(page).isChecked()).toBe(true);

    // The selection survives a reload (it is in the URL) and shows in the boxes after it.
    await page.reload();
    await box(page, 'gone').waitFor();
    expect(await checkedBoxes(page, AGENTS)).toEqual(AGENTS);

    await selectAll(page).click();
    await page.waitForURL((url) => !url.searchParams.has('selected'));
    expect(await checkedBoxes(page, AGENTS)).toEqual([]);
    // Nothing selected: the bar says what it is for, not "0 selected", and its actions are disabled.
    const bar = page.getByRole('toolbar', { name: 'Bulk actions' });
    await bar.getByText('Select rows to act on them').waitFor();
    expect(await bar.getByText(/\d+ selected/).count()).toBe(0);
    expect(await bar.getByRole('button', { name: 'Restart' }).isDisabled()).toBe(true);
    expect(await bar.getByRole('button', { name: 'Clear selection' }).count()).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('sorts by a column from its header, kept in the URL', async () => {
    const { page, problems } = await ui.open('/agent-control');
    const names = () => page.locator('tbody td[data-label="Agent"]').allTextContents();
    await box(page, 'gone').waitFor();
    await page.getByRole('button', { name: 'Agent' }).click();
    await page.waitForURL((url) => url.searchParams.get('sort') === 'name');
    expect((await names()).map((n) => n.trim())).toEqual(AGENTS);
    await page.getByRole('button', { name: 'Agent' }).click();
    await page.waitForURL((url) => url.searchParams.get('sort') === '-name');
    expect((await names()).map((n) => n.trim())).toEqual([...AGENTS].reverse());
    expect(await page.locator('th[aria-sort="descending"]').textContent()).toContain('Agent');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('asks before running a command on offline agents, and runs once confirmed', async () => {
    ui.agents.gone?.kill('SIGKILL');
    const { page, problems } = await ui.open('/agent-control?selected=ctl-1,gone');
    await page
      .getByRole('row')
      .filter({ hasText: 'gone' })
      .getByText('offline', { exact: true })
      .waitFor({ timeout: 20_000 });
    // An offline agent shows no stale gauge.
    expect(await page.getByRole('row').filter({ hasText: 'gone' }).locator('td[data-label="CPU"]').textContent()).toBe(
      '–',
    );
    await page.getByRole('textbox', { name: 'Command' }).fill('echo from-kit');
    await page.getByRole('button', { name: 'Run on 2 agents' }).click();
    const dialog = page.getByRole('dialog', { name: '1 of the chosen agents is offline' });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('gone');
    await screenshot(page, 'kit-offline-warning-light-desktop');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.getByRole('region', { name: 'Output of ctl-1' }).count()).toBe(0);

    await page.getByRole('button', { name: 'Run on 2 agents' }).click();
    await dialog.getByRole('button', { name: 'Run on 2 agents anyway' }).click();
    const output = page.getByRole('region', { name: 'Output of ctl-1' });
    await output.getByText('from-kit').waitFor({ timeout: 20_000 });
    await output.getByText(/exit code 0/).waitFor();
    // The offline agent's answer is the master's refusal, shown in its own section.
    await page.getByRole('region', { name: 'Output of gone' }).getByText('failed').waitFor({ timeout: 20_000 });
    // The refusal is the only failed request (chromium logs it again, without its address).
    expect(problems.sort()).toEqual([
      'HTTP 503: POST ' + ui.master.origin + '/api/v1/agents/gone/exec',
      'console error: Failed to load resource: the server responded with a status of 503 (Service Unavailable)',
    ]);
    await page.context().close();
  });

  it('asks before restarting the selection, and a cancel restarts nothing', async () => {
    const { page, problems } = await ui.open('/agent-control?selected=ctl-2');
    await box(page, 'ctl-2').waitFor();
    await page.getByRole('toolbar', { name: 'Bulk actions' }).getByRole('button', { name: 'Restart' }).click();
    const dialog = page.getByRole('dialog', { name: 'Restart 1 agent?' });
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.getByText('ctl-2: restarting').count()).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

const SLEEPER = [
  'version: "1.0"',
  'tasks:',
  '  - name: wait',
  '    exec:',
  '      script: |',
  '        goroutine.sleep("120s")',
].join('\n');

describe('the list view on executions', () => {
  it('shows running runs counting up, cancels two after a confirm and runs an ended one again', async () => {
    const finished = await runWorkflow(
      ui.master,
      'version: "1.0"\ntasks:\n  - name: quick\n    exec: { script: "return true" }\n',
      'kit-quick',
    );
    const started = await Promise.all(
      ['kit-slow-a', 'kit-slow-b'].map((name) =>
        apiCall<{ id: string }>(ui.master, 'POST', '/workflows/run', { content: SLEEPER, workflow_name: name }),
      ),
    );
    const { page, problems } = await ui.open('/executions');
    const rowOf = (id: string) => page.getByRole('row').filter({ hasText: id });
    for (const { id } of started) await rowOf(id).waitFor();
    // A running run's duration is the time since it started, counting up, never "0ms".
    const durationCell = rowOf(started[0]!.id).locator('td[data-label="Duration"]');
    await expect.poll(() => durationCell.textContent(), { timeout: 20_000 }).toMatch(/^\s*([1-9]\d*s|\d+m \d+s)\s*$/);

    await page.getByRole('checkbox', { name: `Select ${started[0]!.id}` }).click();
    await page.getByText('1 selected', { exact: true }).waitFor();
    expect(await looks(page, 'kit-executions')).toEqual([]);

    await page.getByRole('checkbox', { name: `Select ${started[1]!.id}` }).click();
    const bar = page.getByRole('toolbar', { name: 'Bulk actions' });
    await bar.getByText('2 selected', { exact: true }).waitFor();
    await bar.getByRole('button', { name: 'Cancel 2' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel 2 runs?' });
    await dialog.waitFor();
    await screenshot(page, 'kit-executions-confirm-light-desktop');
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Cancel 2 runs' }).click();
    await page.getByRole('status').getByText('kit-slow-a: cancelled').waitFor({ timeout: 20_000 });
    for (const { id } of started) {
      await expect
        .poll(async () => (await apiCall<{ status: string }>(ui.master, 'GET', `/executions/${id}`)).status, {
          timeout: 20_000,
        })
        .toBe('cancelled');
    }

    const before = (await apiCall<{ total: number }>(ui.master, 'GET', '/executions?limit=1')).total;
    await page.getByRole('checkbox', { name: `Select ${finished.id}` }).click();
    await bar.getByRole('button', { name: 'Run again 1' }).click();
    await page
      .getByRole('dialog', { name: 'Run 1 workflow again?' })
      .getByRole('button', { name: 'Run 1 run again' })
      .click();
    await page
      .getByRole('status')
      .getByText(/kit-quick: started again as \S+/)
      .waitFor({ timeout: 20_000 });
    expect((await apiCall<{ total: number }>(ui.master, 'GET', '/executions?limit=1')).total).toBe(before + 1);

    // Sorted by workflow from the header, in the URL.
    await page.getByRole('button', { name: 'Workflow' }).click();
    await page.waitForURL((url) => url.searchParams.get('sort') === 'workflow');
    const names = (await page.locator('tbody td[data-label="Workflow"] a').allTextContents()).map((n) => n.trim());
    expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b)));
    expect(problems).toEqual([]);
    await page.context().close();
  }, 240_000);

  it('charts runs over time by outcome, and filters by trigger, user and agent in the URL', async () => {
    const onAgent = await apiCall<{ id: string }>(ui.master, 'POST', '/workflows/run', {
      content: 'version: "1.0"\ntasks:\n  - name: there\n    exec: { script: "return true" }\n',
      workflow_name: 'kit-on-agent',
      delegate_to: ['ctl-1'],
      trigger: 'cli',
    });
    await expect
      .poll(async () => (await apiCall<{ status: string }>(ui.master, 'GET', `/executions/${onAgent.id}`)).status)
      .toBe('succeeded');
    // What the chart must say: the runs of the last day by outcome, as the list counts them.
    const since = new Date(Date.now() - 86400_000).toISOString();
    const want: Record<string, number> = {};
    for (const status of ['succeeded', 'failed', 'cancelled'])
      want[status] = (
        await apiCall<{ total: number }>(ui.master, 'GET', `/executions?status=${status}&since=${since}&limit=0`)
      ).total;
    expect(want.cancelled).toBeGreaterThanOrEqual(2);

    const { page, problems } = await ui.open('/executions');
    const chart = page.getByRole('region', { name: 'Runs over time' });
    const legend = chart.locator('figcaption');
    for (const [status, n] of Object.entries(want)) await legend.getByText(`${status} ${n}`).waitFor();
    // The bars are drawn in the legend's colours.
    for (const status of ['succeeded', 'cancelled']) {
      const key = await legend
        .locator(`[data-series="${status}"]`)
        .evaluate((e) => (e as { style: { background: string } }).style.background);
      const bar = await chart
        .locator(`.bars [data-series="${status}"]`)
        .first()
        .evaluate((e) => (e as { style: { background: string } }).style.background);
      expect(bar).toBe(key);
    }
    expect(await looks(page, 'kit-executions-chart', { show: chart })).toEqual([]);

    await page.getByLabel('Trigger').selectOption('cli');
    await page.waitForURL((url) => url.searchParams.get('trigger') === 'cli');
    const workflows = () => page.locator('tbody td[data-label="Workflow"] a').allTextContents();
    await expect.poll(workflows).toEqual(['kit-on-agent']);
    await legend.getByText('succeeded 1').waitFor();
    await page.getByLabel('Trigger').selectOption('');
    await page.getByLabel('Agent').fill('ctl-1');
    await page.waitForURL((url) => url.searchParams.get('agent') === 'ctl-1' && !url.searchParams.has('trigger'));
    await expect.poll(workflows).toEqual(['kit-on-agent']);
    await page.reload();
    expect(await page.getByLabel('Agent').inputValue()).toBe('ctl-1');
    await expect.poll(workflows).toEqual(['kit-on-agent']);
    await page.getByLabel('User').fill('nobody-started-this');
    await page.waitForURL((url) => url.searchParams.get('user') === 'nobody-started-this');
    await page.getByRole('heading', { name: 'No execution matches these filters' }).waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('the dashboard', () => {
  it('keeps its charts’ recent samples across a reload, and counts cancelled runs in the 24 h figures', async () => {
    const { page, problems } = await ui.open('/');
    const charts = page.getByRole('region', { name: 'Master resources' });
    await charts.locator('canvas').first().waitFor();
    const first = () => charts.getAttribute('data-first-sample');
    await expect.poll(first).toMatch(/^\d+$/);
    const before = await first();
    await page.reload();
    await charts.locator('canvas').first().waitFor();
    // The same oldest sample: a tab reloaded without them would start from a new one.
    expect(await first()).toBe(before);
    const cancelled = (
      await apiCall<{ total: number }>(
        ui.master,
        'GET',
        `/executions?status=cancelled&since=${new Date(Date.now() - 86400_000).toISOString()}&limit=0`,
      )
    ).total;
    await page.getByText(new RegExp(`· ${cancelled} cancelled`)).waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("draws every tile the master lists, a plugin's own among them, in order and opening its page", async () => {
    await apiCall(ui.master, 'POST', '/notes', { name: 'n1', text: 'pinned one', pinned: true });
    const { page, problems } = await ui.open('/');
    const counts = page.getByRole('region', { name: 'Counts' });
    await page.getByTestId('count-notes').filter({ hasText: '1' }).waitFor();
    const { tiles } = await apiCall<{ tiles: { id: string; title: string; href: string }[] }>(
      ui.master,
      'GET',
      '/dashboard',
    );
    // The dashboard's own tiles first (orders 10 and 20), the built-in features' next, the notes
    // plugin's (90) last; the page draws them all in that order.
    const ids = tiles.map((t) => t.id);
    expect(ids.slice(0, 5)).toEqual(['agents', 'online-agents', 'executions', 'running', 'executions-24h']);
    expect(ids.at(-1)).toBe('notes');
    expect(
      await counts.locator('[data-tile]').evaluateAll((els) => els.map((e) => e.getAttribute('data-tile'))),
    ).toEqual(tiles.map((t) => t.id));
    expect(await counts.locator('[data-tile="notes"]').textContent()).toContain('1 pinned');
    expect(await counts.locator('[data-tile="notes"]').getAttribute('href')).toBe('/notes');
    expect(await looks(page, 'kit-dashboard-tiles', { show: counts })).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('lists the 10 latest stored events across a reload, a new one live, each opening its page', async () => {
    type Listed = { events: { id: string }[] };
    const { page, problems } = await ui.open('/');
    const panel = page.getByRole('region', { name: 'Latest events' });
    const shown = () =>
      panel.locator('a[href^="/events/"]').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
    const stored = async () =>
      (await apiCall<Listed>(ui.master, 'GET', '/events?limit=10')).events.map((e) => `/events/${e.id}`);
    // The agents' events at least; the same ten as the API, newest first (both read again until
    // the queue is quiet between the two reads).
    await expect.poll(async () => (await shown()).length, { timeout: 30_000 }).toBe(10);
    await expect.poll(async () => (await shown()).join() === (await stored()).join(), { timeout: 30_000 }).toBe(true);
    // Read from the store, not gathered by the tab: a reload shows them again.
    await page.reload();
    await expect.poll(async () => (await shown()).join() === (await stored()).join(), { timeout: 30_000 }).toBe(true);

    // A run's events arrive over the WebSocket (event_update): the same document, newer ids on top.
    // (Which events are newest is not the test's to choose: agents on a busy machine report status
    // changes, so the run's own may already be pushed below the ten.)
    await page.evaluate('window.sameDocument = true');
    const newest = (await shown())[0] ?? '';
    await runWorkflow(
      ui.master,
      'version: "1.0"\ntasks:\n  - name: t\n    exec: { script: "return true" }\n',
      'latest-events',
    );
    await expect.poll(async () => ((await shown())[0] ?? '') > newest, { timeout: 30_000 }).toBe(true);
    expect(await page.evaluate('window.sameDocument')).toBe(true);
    await expect.poll(async () => (await shown()).join() === (await stored()).join(), { timeout: 30_000 }).toBe(true);
    expect(await looks(page, 'dashboard-latest-events', { show: panel })).toEqual([]);
    // Each opens its own page.
    const first = panel.locator('a[href^="/events/"]').first();
    const [href, type] = [await first.getAttribute('href'), await first.textContent()];
    await first.click();
    await page.waitForURL((url) => url.pathname === href);
    await page.getByRole('heading', { name: type ?? '' }).waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('addresses without a page', () => {
  it('says an unknown address has no page, in the frame, with a way back', async () => {
    const { page, problems } = await ui.open('/no-such-page');
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    expect(await page.getByText('No page has the address /no-such-page.').count()).toBe(1);
    expect(await page.getByRole('navigation', { name: 'Main' }).count()).toBe(1);
    expect(await looks(page, 'kit-not-found')).toEqual([]);
    expect(problems.filter((p) => !p.includes('404'))).toEqual([]);
    await page.context().close();
  });
});

describe('the /flows page', () => {
  const yaml = (word: string) =>
    `version: "1.0"\ntasks:\n  - name: say\n    exec:\n      script: 'return true, "${word}"'\n`;

  it('lists flows with stats, searches, toggles active, edits with validation, diffs side by side and restores', async () => {
    await apiCall(ui.master, 'POST', '/flows', {
      name: 'web-deploy',
      yaml: yaml('one'),
      tags: ['web'],
      description: 'Ships the site to the web tier',
    });
    await apiCall(ui.master, 'PUT', '/flows/web-deploy', { yaml: yaml('two'), base_version: 1, message: 'say two' });
    await apiCall(ui.master, 'POST', '/flows', {
      name: 'nightly-backup',
      yaml: yaml('b'),
      active: false,
      tags: ['ops'],
    });

    const { page, problems } = await ui.open('/flows');
    const table = page.getByRole('table', { name: 'Flows' });
    await table.getByRole('link', { name: 'web-deploy' }).waitFor();
    expect(await looks(page, 'flows-list')).toEqual([]);
    await page.getByRole('searchbox', { name: 'Search' }).fill('backup');
    await page.waitForURL((url) => url.searchParams.get('q') === 'backup');
    await expect.poll(() => table.getByRole('link', { name: 'web-deploy' }).count()).toBe(0);
    await page.getByRole('switch', { name: 'nightly-backup active' }).click();
    await expect.poll(() => page.getByRole('switch', { name: 'nightly-backup active' }).isChecked()).toBe(true);
    // The switch shows the state read back after the change, so the server holds it already.
    expect((await apiCall<{ active: boolean }>(ui.master, 'GET', '/flows/nightly-backup')).active).toBe(true);

    await page.goto('/flows/web-deploy');
    const editor = page.locator('.cm-content');
    await editor.waitFor();
    await page.getByText('Valid: 1 task.').waitFor();
    // A typo is found as it is typed, at its line, and saving waits for a fix.
    // Whole texts put in as a paste would (typing would meet the editor's auto-indent).
    await editor.click();
    await page.keyboard.press('Control+a');
    await page.keyboard.insertText(`${yaml('two')}  - nme: oops\n`);
    await page.getByRole('alert', { name: 'Problems in the workflow' }).waitFor();
    expect(await page.getByRole('button', { name: 'Save as version 3' }).isDisabled()).toBe(true);
    await page.keyboard.press('Control+a');
    await page.keyboard.insertText(`${yaml('two')}  - name: more\n    exec:\n      script: return true\n`);
    await page.getByText('Valid: 2 tasks.').waitFor();
    await page.getByRole('textbox', { name: 'Message' }).fill('one more task');
    await page.getByRole('button', { name: 'Save as version 3' }).click();
    await page.getByText('saved as version 3').waitFor();
    expect(await looks(page, 'flows-editor', { axe: false })).toEqual([]);

    await page.getByRole('tab', { name: /Versions/ }).click();
    const diff = page.getByRole('table', { name: 'Version 2 beside version 3' });
    await diff.waitFor();
    expect(await diff.getByRole('cell', { name: /added:\s+- name: more/ }).count()).toBe(1);
    expect(await looks(page, 'flows-versions')).toEqual([]);
    await page.getByRole('row', { name: /v1/ }).getByRole('button', { name: 'Restore' }).click();
    await page.getByRole('button', { name: 'Restore version 1' }).click();
    await page.getByText('version 1 restored').waitFor();
    const flow = await apiCall<{ version: number; yaml: string }>(ui.master, 'GET', '/flows/web-deploy');
    expect(flow).toMatchObject({ version: 4, yaml: yaml('one') });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('exports a selected flow with its history and imports the file back; a conflicting or broken file says why', async () => {
    await apiCall(ui.master, 'POST', '/flows', { name: 'to-move', yaml: yaml('first'), tags: ['move'] });
    await apiCall(ui.master, 'PUT', '/flows/to-move', { yaml: yaml('second'), base_version: 1, message: 'second' });
    const { page, problems } = await ui.open('/flows?q=to-move');
    const table = page.getByRole('table', { name: 'Flows' });
    await table.getByRole('link', { name: 'to-move' }).waitFor();
    await page.getByRole('checkbox', { name: 'Select to-move' }).check();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export with history' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('to-move.flows.json');
    const file = join(tempDataDir('flows-export'), 'to-move.flows.json');
    await download.saveAs(file);

    // Back into the master that holds it: refused whole, naming the flow.
    const input = page.getByLabel('Import flows from an export file');
    await input.setInputFiles(file);
    // Shown as an error, not as a notice of success.
    await page
      .getByRole('alert')
      .filter({ hasText: 'nothing imported: to-move (a flow of that name exists)' })
      .waitFor();
    await screenshot(page, 'flows-import-refused');
    await apiCall(ui.master, 'DELETE', '/flows/to-move');
    await input.setInputFiles(file);
    await page.getByRole('status').filter({ hasText: 'imported to-move' }).waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    await table.getByRole('link', { name: 'to-move' }).waitFor();
    const versions = await apiCall<{ versions: { version: number }[] }>(ui.master, 'GET', '/flows/to-move/versions');
    expect(versions.versions.map((v) => v.version).sort()).toEqual([1, 2]);
    expect((await apiCall<{ yaml: string }>(ui.master, 'GET', '/flows/to-move')).yaml).toBe(yaml('second'));

    await input.setInputFiles({ name: 'notes.json', mimeType: 'application/json', buffer: Buffer.from('not json') });
    await page.getByRole('alert').filter({ hasText: 'notes.json is not an export file' }).waitFor();
    // The refused import, and nothing else.
    expect(problems.filter((p) => !p.includes('409'))).toEqual([]);
    expect(problems.filter((p) => p.startsWith('HTTP 409'))).toEqual([
      `HTTP 409: POST ${ui.master.origin}/api/v1/flows/import`,
    ]);
    await page.context().close();
  });
});

/** WCAG's contrast ratio of two computed colours (`rgb(...)`), as the browser resolved them. */
function contrast(a: string, b: string): number {
  const luminance = (css: string) => {
    const [r, g, bl] = (css.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number) as [number, number, number];
    const lin = (c: number) => (c / 255 <= 0.03928 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4);
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(bl);
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

async function colours(button: Locator): Promise<{ color: string; background: string; outline: string }> {
  return button.evaluate((el) => {
    const style = (globalThis as unknown as InPage).getComputedStyle(el);
    return { color: style.color, background: style.backgroundColor, outline: style.outlineColor };
  });
}

describe('primary buttons', () => {
  it('keep WCAG AA contrast at rest, hovered and focused, in both themes', async () => {
    const { page, problems } = await ui.open('/executions');
    const button = page.getByRole('button', { name: 'New run' });
    await button.waitFor();
    for (const theme of ['light', 'dark'] as const) {
      await setLook(page, theme, 'desktop');
      await page.mouse.move(0, 0);
      const pageBackground = await page.evaluate(() => {
        const window = globalThis as unknown as InPage;
        return window.getComputedStyle(window.document.body).backgroundColor;
      });
      const rest = await colours(button);
      expect(contrast(rest.color, rest.background)).toBeGreaterThanOrEqual(4.5);

      await button.hover();
      await expect.poll(async () => (await colours(button)).background).not.toBe(rest.background);
      const hovered = await colours(button);
      expect(contrast(hovered.color, hovered.background)).toBeGreaterThanOrEqual(4.5);
      await screenshot(page, `kit-primary-hover-${theme}-desktop`);

      await page.mouse.move(0, 0);
      await button.focus();
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Tab');
      expect(
        await button.evaluate((el) => (el as { matches(selector: string): boolean }).matches(':focus-visible')),
      ).toBe(true);
      const focused = await colours(button);
      expect(contrast(focused.color, focused.background)).toBeGreaterThanOrEqual(4.5);
      // The focus ring is drawn outside the button, on the page: 3:1 against it (non-text contrast).
      expect(contrast(focused.outline, pageBackground)).toBeGreaterThanOrEqual(3);
      await screenshot(page, `kit-primary-focus-${theme}-desktop`);
    }
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
