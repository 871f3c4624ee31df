// Every page of the web UI against a real master with real agents, in Debian's chromium: it loads
// with no console error and no failed request, axe-core finds no serious violation (every rule at
// each size, the rules a theme changes in the other theme), and screenshots at 1280x800 and 390x844
// in light and dark go to ui/screenshots/. Each page loads once; its four looks are switched in place.
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { context, type Look, looks, screenshot, watch } from './browser.js';
import { runWorkflow } from './fleet.js';
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
}, 60_000);

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
    const check = item.check;
    const violations = await looks(page, item.name, { check: check && ((look) => check(page, look)) });
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

export { runId };
