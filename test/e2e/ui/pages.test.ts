// Every page of the web UI against a real master with real agents, in Debian's chromium: it loads
// with no console error and no failed request, axe-core finds no serious violation (every rule at
// each size, the rules a theme changes in the other theme), and screenshots at 1280x800 and 390x844
// in light and dark go to ui/screenshots/. Each page loads once; its four looks are switched in place.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Look, looks, screenshot } from './browser.js';
import { apiCall, runWorkflow } from './fleet.js';
import { uiSuite } from './suite.js';

const ui = uiSuite({ agents: ['web-1', 'db-1'] });
let runId = '';
/** The run's workflow.completed event, failed by the `flaky` hook (see beforeAll). */
let failedEvent = '';
let flakyId = 0;

beforeAll(async () => {
  // Two hooks on the run's end: one succeeds, the other fails its event (the /events pages' data).
  await apiCall(ui.master, 'POST', '/hooks', {
    name: 'notify',
    event_type: 'workflow.completed',
    priority: 10,
    script: 'return hook.payload.status == "succeeded"',
  });
  flakyId = (
    await apiCall<{ id: number }>(ui.master, 'POST', '/hooks', {
      name: 'flaky',
      event_type: 'workflow.*',
      priority: 20,
      script: 'if hook.event ~= "workflow.completed" then return true end\nreturn false, "no endpoint configured"',
    })
  ).id;
  const run = await runWorkflow(
    ui.master,
    [
      'version: "1.0"',
      'tasks:',
      '  - name: hello',
      '    exec:',
      '      script: |',
      '        log.info("hello from the UI test")',
      '  - name: on-agent',
      '    delegate_to: web-1',
      '    exec:',
      '      script: |',
      '        log.info("on an agent")',
    ].join('\n'),
    'ui-smoke',
  );
  runId = run.id;
  // A scheduled job with history: a slot run now, then the job disabled (its next runs say so).
  mkdirSync(join(ui.master.dataDir, 'workflows'), { recursive: true });
  writeFileSync(
    join(ui.master.dataDir, 'workflows', 'nightly.yaml'),
    'version: "1.0"\ntasks:\n  - name: t\n    exec: { script: "return true" }\n',
  );
  for (const [name, timezone] of [
    ['nightly-backup', 'Europe/Berlin'],
    ['weekday-report', 'America/New_York'],
  ])
    await apiCall(ui.master, 'POST', '/scheduler/jobs', {
      name,
      workflow: 'nightly.yaml',
      schedule: name === 'nightly-backup' ? '30 2 * * *' : '15 9 * * 1-5',
      timezone,
      missed: 'run_once',
    });
  await apiCall(ui.master, 'POST', '/scheduler/jobs/nightly-backup/run');
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { events } = await apiCall<{ events: { id: string; data: { run_id: string } }[] }>(
      ui.master,
      'GET',
      '/events?type=workflow.completed&status=failed',
    );
    failedEvent = events.find((e) => e.data.run_id === runId)?.id ?? '';
    if (failedEvent) break;
    if (Date.now() > deadline) throw new Error("the run's workflow.completed event did not fail within 30 s");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}, 60_000);

/** What the test reads of elements in the page (its own TypeScript has no DOM types). */
interface Measured {
  scrollWidth: number;
  clientWidth: number;
  getBoundingClientRect(): { bottom: number };
  querySelector(selector: string): Measured | null;
}

interface PageCase {
  name: string;
  path: () => string;
  /** What shows once the page has its data. */
  ready: (page: Page) => Promise<unknown>;
  /** Visited without a session (the login page). */
  anonymous?: boolean;
  /** What must hold in each look besides axe (a layout at a size), before its screenshot. */
  check?: (page: Page, look: Look) => Promise<void>;
}

/** Where the list view's rows are drawn as cards: a phone; a table row on a desktop. */
async function rowsAsCards(page: Page, [theme, viewport]: Look): Promise<void> {
  const display = await page
    .locator('tbody tr')
    .first()
    .evaluate((row) => (globalThis as unknown as InPage).getComputedStyle(row).display);
  expect(display, `${theme} ${viewport}`).toBe(viewport === 'phone' ? 'block' : 'table-row');
}

/** What the functions run in the page use of it (the test's own TypeScript has no DOM types). */
interface InPage {
  getComputedStyle(element: unknown): { display: string };
}

const PAGES: PageCase[] = [
  {
    name: 'login',
    path: () => '/login',
    ready: (page) => page.getByRole('button', { name: 'Log in' }).waitFor(),
    anonymous: true,
  },
  {
    name: 'dashboard',
    path: () => '/',
    // The counts, and the latest events panel filled (its own read).
    ready: async (page) => {
      await page.getByTestId('count-agents').filter({ hasText: '2' }).waitFor();
      await page.getByRole('region', { name: 'Latest events' }).locator('a[href^="/events/"]').first().waitFor();
    },
  },
  {
    name: 'agents',
    path: () => '/agents',
    ready: (page) => page.getByRole('heading', { name: 'db-1' }).waitFor(),
  },
  {
    name: 'agent-details',
    path: () => '/agents?agent=web-1',
    ready: (page) => page.getByRole('dialog').getByText('Last heartbeat').waitFor(),
  },
  {
    name: 'agent-dashboard',
    path: () => '/agent-dashboard',
    ready: (page) => page.getByRole('heading', { name: 'web-1' }).waitFor(),
  },
  {
    name: 'agent-control',
    path: () => '/agent-control?selected=db-1,web-1',
    // The selection from the URL shows in the boxes (the kit's list view).
    ready: async (page) => {
      await page.getByRole('heading', { name: 'Execute command' }).waitFor();
      for (const name of ['db-1', 'web-1'])
        expect(await page.getByRole('checkbox', { name: `Select ${name}`, exact: true }).isChecked()).toBe(true);
    },
    check: rowsAsCards,
  },
  {
    name: 'executions',
    path: () => '/executions',
    ready: (page) => page.getByRole('link', { name: 'ui-smoke' }).waitFor(),
  },
  {
    name: 'executions-new-run',
    path: () => '/executions?new=1',
    ready: (page) => page.getByRole('form', { name: 'New run' }).waitFor(),
  },
  {
    name: 'execution',
    path: () => `/executions/${runId}`,
    ready: (page) => page.getByText('hello from the UI test').waitFor(),
  },
  {
    name: 'hooks',
    path: () => '/hooks',
    // flaky ran twice on the run (workflow.started: true; workflow.completed: false).
    ready: (page) => page.getByRole('cell', { name: '50%', exact: true }).waitFor(),
  },
  {
    name: 'hooks-new',
    path: () => '/hooks?new=1',
    ready: (page) => page.getByRole('textbox', { name: 'Script' }).waitFor(),
  },
  {
    name: 'hook-history',
    path: () => `/hooks/${flakyId}?tab=history`,
    ready: (page) => page.getByText('no endpoint configured').first().waitFor(),
  },
  {
    name: 'events',
    path: () => '/events',
    ready: (page) => page.getByText('flaky: no endpoint configured').first().waitFor(),
  },
  {
    name: 'event',
    path: () => `/events/${failedEvent}`,
    ready: (page) => page.getByRole('button', { name: 'Retry failed hooks' }).waitFor(),
  },
  {
    name: 'logs',
    // Warnings only, so that the rows are few; ready once the viewer has counted what it loaded.
    path: () => '/logs?since=all&level=warn',
    ready: (page) =>
      page
        .getByText(/\d+ of \d+ lines/)
        .first()
        .waitFor(),
  },
  {
    name: 'scheduler',
    path: () => '/scheduler?job=nightly-backup',
    ready: (page) => page.getByRole('heading', { name: 'History' }).and(page.locator('h3')).waitFor(),
  },
  {
    name: 'settings',
    path: () => '/settings?tab=config',
    ready: (page) => page.getByRole('cell', { name: 'http.port', exact: true }).waitFor(),
  },
];

async function visit(item: PageCase) {
  const { page, problems } = await ui.open(item.path(), { session: item.anonymous ? null : undefined });
  try {
    await item.ready(page);
    // Charts and late requests settle.
    await page.waitForLoadState('networkidle').catch(() => undefined);
    const check = item.check;
    const violations = await looks(page, item.name, { check: check && ((look) => check(page, look)) });
    return { problems, violations };
  } finally {
    await page.context().close();
  }
}

describe('the frame', () => {
  it('opens the menu on a phone and closes it once a link is followed', async () => {
    const { page, problems } = await ui.open('/', { viewport: 'phone' });
    await page.getByRole('button', { name: 'Menu' }).click();
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Logs' }).waitFor();
    await screenshot(page, 'menu-open-light-phone');
    await nav.getByRole('link', { name: 'Logs' }).click();
    await page.getByRole('heading', { name: 'Logs', level: 1 }).waitFor();
    expect(await nav.isVisible()).toBe(false);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('offers a skip link first for keyboard users, and moves focus to the page', async () => {
    const { page } = await ui.open('/agents');
    await page.getByRole('heading', { name: 'web-1' }).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate('document.activeElement.id')).toBe('main');
    await page.context().close();
  });
});

describe("the master's log", () => {
  it('shows and filters each line by workflow, run and agent, kept in the URL across a reload', async () => {
    const { page, problems } = await ui.open('/logs?since=all');
    const log = page.getByRole('log', { name: 'Log of the run' });
    const hello = log.locator('.line').filter({ hasText: 'hello from the UI test' });
    // Each facet's select, by its "all" choice (a label holds its options' text too).
    const facet = (all: string) => page.locator('select').filter({ has: page.locator('option', { hasText: all }) });
    await hello.waitFor();
    // Where the line comes from: its workflow and run beside its plugin.
    expect(await hello.locator('.where').textContent()).toContain(`ui-smoke · ${runId}`);
    await facet('All workflows').selectOption('ui-smoke');
    await page.waitForURL((url) => url.searchParams.get('workflow') === 'ui-smoke');
    await expect
      .poll(async () => (await log.locator('.line .where').allTextContents()).every((w) => w.includes('ui-smoke')))
      .toBe(true);
    await facet('All runs').selectOption(runId);
    await page.waitForURL((url) => url.searchParams.get('run') === runId);
    await page.reload();
    await hello.waitFor();
    expect(await facet('All workflows').inputValue()).toBe('ui-smoke');
    expect(await facet('All runs').inputValue()).toBe(runId);
    const wheres = await log.locator('.line .where').allTextContents();
    expect(wheres.length).toBeGreaterThan(0);
    expect(wheres.every((w) => w.includes(runId))).toBe(true);
    // On a phone where a line comes from wraps under its time and level, whole, and neither it
    // nor the message spills out of the line's rows (it used to be cut off at 9rem).
    const fits = async () => {
      const measured = await hello.evaluate((line: Measured) => {
        const bottom = line.getBoundingClientRect().bottom + 1;
        const [where, msg] = [line.querySelector('.where')!, line.querySelector('.msg')!];
        return {
          whole: where.scrollWidth <= where.clientWidth + 1,
          inside: where.getBoundingClientRect().bottom <= bottom && msg.getBoundingClientRect().bottom <= bottom,
        };
      });
      expect(measured).toEqual({ whole: true, inside: true });
    };
    const phone = [
      ['dark', 'phone'],
      ['light', 'phone'],
    ] as const;
    expect(await looks(page, 'logs-source', { looks: phone, show: hello, check: fits })).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('every page', () => {
  for (const item of PAGES) {
    it(`${item.name}: loads cleanly, accessible, screenshots light and dark at both sizes`, async () => {
      const { problems, violations } = await visit(item);
      expect(problems, item.name).toEqual([]);
      expect(violations, item.name).toEqual([]);
    });
  }
});

describe('the scheduler page', () => {
  it('adds a job through the form (a bad schedule and an unknown stack shown at their fields), runs it now and disables it', async () => {
    const { page, problems } = await ui.open('/scheduler');
    try {
      await page.getByRole('button', { name: 'Add job' }).click();
      const form = page.getByRole('form', { name: 'Add a job' });
      await form.getByLabel('Name').fill('hourly-sync');
      await form.getByLabel(/^Workflow file/).fill('nightly.yaml');
      await form.getByLabel(/^Schedule/).fill('0 * * *');
      await form.getByLabel('Time zone').fill('Asia/Tokyo');
      await form.getByRole('button', { name: 'Add job' }).click();
      await expect
        .poll(() => form.getByRole('alert').textContent())
        .toBe(
          'schedule: "0 * * *" has 4 fields; a schedule has five (minute hour day-of-month month day-of-week), e.g. "*/5 * * * *"',
        );
      expect(await form.getByLabel(/^Schedule/).getAttribute('aria-invalid')).toBe('true');
      await form.getByLabel(/^Schedule/).fill('0 * * * *');
      // A stack that does not exist is refused at save, at its field.
      await form.getByLabel(/^Stack/).fill('nowhere');
      await form.getByRole('button', { name: 'Add job' }).click();
      await expect.poll(() => form.getByRole('alert').textContent()).toMatch(/^stack: stack "nowhere" does not exist/);
      await form.getByLabel(/^Stack/).fill('');
      await form.getByRole('button', { name: 'Add job' }).click();
      await page.waitForURL((url) => url.searchParams.get('job') === 'hourly-sync');
      const detail = page.getByRole('region', { name: 'hourly-sync' });
      // Next runs spelled out in the job's zone, on the hour in Tokyo.
      await expect.poll(() => detail.getByRole('listitem').count()).toBe(5);
      expect(await detail.getByRole('listitem').first().textContent()).toMatch(
        /^\w+day, \d+ \w+ \d{4} at \d\d:00 GMT\+9 (in |now$)/, // "now" when the test runs in the half minute before the hour
      );

      await detail.getByRole('button', { name: 'Run now' }).click();
      await expect.poll(() => page.getByRole('status').textContent()).toBe('hourly-sync: started now');
      const history = detail.getByRole('table', { name: 'History of hourly-sync' });
      await history.getByText('run now', { exact: true }).waitFor();
      await history.getByText('Succeeded').first().waitFor(); // the list is read again every 5 s

      await page.getByRole('switch', { name: 'hourly-sync enabled' }).click();
      await expect.poll(() => detail.getByText('None: the job is disabled.').count()).toBe(1);
      expect(await page.getByRole('switch', { name: 'hourly-sync enabled' }).getAttribute('aria-checked')).toBe(
        'false',
      );
      await screenshot(page, 'scheduler-added');
      // The refused schedule's and stack's 400s are the ones expected; nothing else went wrong.
      expect(problems.filter((p) => !/400|POST http:\/\/[\d.:]+\/api\/v1\/scheduler\/jobs$/.test(p))).toEqual([]);
    } finally {
      await page.context().close();
    }
  });
});

describe('hooks and events', () => {
  it('refuses a script that does not compile at its line, then retries the event its fix lets through', async () => {
    const { page, problems } = await ui.open(`/hooks/${flakyId}`);
    const editor = page.getByRole('textbox', { name: 'Script' });
    await editor.waitFor();
    await editor.click();
    await page.keyboard.press('Control+a');
    await page.keyboard.type('local ok = true\nif ok then\n  return true\n');
    await page.getByRole('button', { name: 'Save' }).click();
    const error = page.getByRole('alert').filter({ hasText: 'hook flaky:4:' });
    await error.waitFor();
    // Marked in the editor at the line the master named.
    await page.locator('.cm-lintRange-error').first().waitFor();
    await screenshot(page, 'hooks-compile-error-light');
    await editor.click();
    await page.keyboard.press('Control+a');
    await page.keyboard.type('return true\n');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();

    // The test tab runs it on a given payload.
    await page.getByRole('tab', { name: 'Test' }).click();
    await page.getByRole('textbox', { name: /Payload/ }).fill('{"workflow_name": "given"}');
    await page.getByRole('button', { name: 'Run test' }).click();
    await page.getByRole('status', { name: 'Test result' }).getByText('(dry run)').waitFor();

    // The failed event: retried from its page, it completes (shown live).
    await page.goto(`/events/${failedEvent}`);
    await page.getByRole('button', { name: 'Retry failed hooks' }).click();
    await page.locator('.head').getByText('completed', { exact: true }).waitFor();
    const results = page.getByRole('region', { name: 'Hook results' });
    // Both hooks' results: notify's kept from the first time, flaky's from the retry.
    await expect.poll(() => results.getByRole('row').count()).toBe(3);
    // The one failed request is the refused save, answered 400 as meant.
    expect(problems).toEqual([
      `HTTP 400: PUT ${ui.master.origin}/api/v1/hooks/${flakyId}`,
      'console error: Failed to load resource: the server responded with a status of 400 (Bad Request)',
    ]);
    await page.context().close();
  });

  it('turns a hook off from the list, and filters events by type and status', async () => {
    const { page, problems } = await ui.open('/hooks');
    const toggle = page.getByRole('switch', { name: 'Enable notify' });
    await toggle.waitFor();
    expect(await toggle.isChecked()).toBe(true);
    await toggle.click();
    await expect.poll(() => toggle.isChecked()).toBe(false);
    expect((await apiCall<{ enabled: boolean }>(ui.master, 'GET', '/hooks/notify')).enabled).toBe(false);
    await page.goto('/events?type=workflow.completed');
    // The type filter offers what the master emits (agent.status_changed among them), the
    // address's type chosen.
    const typeFilter = page.getByRole('combobox', { name: 'Type' });
    await typeFilter.locator('option', { hasText: 'agent.status_changed' }).waitFor({ state: 'attached' });
    expect(await typeFilter.inputValue()).toBe('workflow.completed');
    await typeFilter.selectOption('');
    await page.waitForURL((url) => !url.searchParams.has('type'));
    await page.getByRole('combobox', { name: 'Status' }).selectOption('completed');
    await page.waitForURL((url) => url.searchParams.get('status') === 'completed');
    // The run's start: both hooks' matching one (flaky) succeeded on it.
    await page.getByRole('link', { name: 'workflow.started' }).first().waitFor();
    expect(await page.getByRole('link', { name: 'workflow.failed' }).count()).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

export { runId };
