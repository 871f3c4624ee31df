// Every page of the web UI against a real master with real agents, in Debian's chromium: it loads
// with no console error and no failed request, axe-core finds no serious violation (every rule at
// each size, the rules a theme changes in the other theme), and screenshots at 1280x800 and 390x844
// in light and dark go to ui/screenshots/. Each page loads once; its four looks are switched in place.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { context, looks, screenshot, watch } from './browser.js';
import { apiCall, runWorkflow } from './fleet.js';
import { uiSuite } from './suite.js';

const ui = uiSuite({ agents: ['web-1', 'db-1'] });
let runId = '';

beforeAll(async () => {
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
    ready: (page) => page.getByTestId('count-agents').filter({ hasText: '2' }).waitFor(),
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
    ready: (page) => page.getByRole('heading', { name: 'Execute command' }).waitFor(),
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
  const ctx = await context(ui.browser, { origin: ui.master.origin, session: item.anonymous ? undefined : ui.admin });
  const page = await ctx.newPage();
  const { problems } = watch(page);
  try {
    await page.goto(item.path());
    await item.ready(page);
    // Charts and late requests settle.
    await page.waitForLoadState('networkidle').catch(() => undefined);
    const violations = await looks(page, item.name);
    return { problems, violations };
  } finally {
    await ctx.close();
  }
}

describe('the frame', () => {
  it('opens the menu on a phone and closes it once a link is followed', async () => {
    const ctx = await context(ui.browser, { viewport: 'phone', origin: ui.master.origin, session: ui.admin });
    const page = await ctx.newPage();
    const { problems } = watch(page);
    await page.goto('/');
    await page.getByRole('button', { name: 'Menu' }).click();
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Logs' }).waitFor();
    await screenshot(page, 'menu-open-light-phone');
    await nav.getByRole('link', { name: 'Logs' }).click();
    await page.getByRole('heading', { name: 'Logs', level: 1 }).waitFor();
    expect(await nav.isVisible()).toBe(false);
    expect(problems).toEqual([]);
    await ctx.close();
  });

  it('offers a skip link first for keyboard users, and moves focus to the page', async () => {
    const ctx = await context(ui.browser, { origin: ui.master.origin, session: ui.admin });
    const page = await ctx.newPage();
    await page.goto('/agents');
    await page.getByRole('heading', { name: 'web-1' }).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate('document.activeElement.id')).toBe('main');
    await ctx.close();
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
  it('adds a job through the form (a bad schedule shown at its field), runs it now and disables it', async () => {
    const ctx = await context(ui.browser, { origin: ui.master.origin, session: ui.admin });
    const page = await ctx.newPage();
    const { problems } = watch(page);
    try {
      await page.goto('/scheduler');
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
      await form.getByRole('button', { name: 'Add job' }).click();
      await page.waitForURL((url) => url.searchParams.get('job') === 'hourly-sync');
      const detail = page.getByRole('region', { name: 'hourly-sync' });
      // Next runs spelled out in the job's zone, on the hour in Tokyo.
      await expect.poll(() => detail.getByRole('listitem').count()).toBe(5);
      expect(await detail.getByRole('listitem').first().textContent()).toMatch(
        /^\w+day, \d+ \w+ \d{4} at \d\d:00 GMT\+9 in /,
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
      // The refused schedule's 400 is the one expected; nothing else went wrong.
      expect(problems.filter((p) => !/400|POST http:\/\/[\d.:]+\/api\/v1\/scheduler\/jobs$/.test(p))).toEqual([]);
    } finally {
      await ctx.close();
    }
  });
});

export { runId };
