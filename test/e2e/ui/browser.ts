// Debian's chromium driven by playwright-core, and what every UI test checks on a page: no
// console error, no failed request, no serious axe-core violation.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { inject } from 'vitest';
import { CHROMIUM_OPTIONS } from '../../support/chromium-broker.js';
import { repoRoot } from '../helpers.js';

/** Where the tests write their screenshots (named in ui/README.md; gitignored). */
export const SCREENSHOTS = join(repoRoot, 'ui', 'screenshots');

export const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

export type Theme = 'light' | 'dark';

/**
 * The run's chromium (started once by the global set-up's broker, shared by every file), connected
 * to; `close()` on it ends this connection and its contexts, not the browser. Outside a vitest run
 * with the broker, a chromium of its own.
 */
export async function launch(): Promise<Browser> {
  const broker = inject('chromiumBroker');
  if (!broker) return chromium.launch(CHROMIUM_OPTIONS);
  const response = await fetch(broker);
  const answer = await response.text();
  if (!response.ok) throw new Error(answer);
  return chromium.connect(answer, { timeout: 60_000 });
}

/** A browser context with the theme chosen as a user would (the saved choice in localStorage). */
export async function context(
  browser: Browser,
  options: { theme?: Theme; viewport?: keyof typeof VIEWPORTS; origin: string; session?: Session },
): Promise<BrowserContext> {
  const ctx = await browser.newContext({
    viewport: VIEWPORTS[options.viewport ?? 'desktop'],
    baseURL: options.origin,
    // The cookies alone: a storage state with localStorage makes Playwright open a page of the
    // origin to write it, half a second per context; the session is the HttpOnly cookie.
    storageState: options.session ? { cookies: options.session.cookies, origins: [] } : undefined,
    // axe-core is injected as an inline script, which the UI's CSP would refuse.
    bypassCSP: true,
  });
  const theme = options.theme ?? 'light';
  await ctx.addInitScript(`localStorage.setItem('runner.theme', ${JSON.stringify(theme)})`);
  return ctx;
}

/** A logged-in browser's cookies (the HttpOnly session cookie among them), reused by new contexts. */
export type Session = Awaited<ReturnType<BrowserContext['storageState']>>;

/**
 * A user's session: the login API answered in a browser context, which keeps its cookie, as the
 * login page's own call does. What the login page itself does (the form, the way back to where a
 * visitor was going, a wrong password) is flows.test.ts's; every other test starts logged in
 * without loading that page first.
 */
export async function logIn(browser: Browser, origin: string, username: string, password: string): Promise<Session> {
  const ctx = await browser.newContext({ baseURL: origin });
  try {
    const response = await ctx.request.post('/api/v1/auth/login', { data: { username, password } });
    if (!response.ok())
      throw new Error(`logging in as ${username}: HTTP ${response.status()} ${await response.text()}`);
    return await ctx.storageState();
  } finally {
    await ctx.close();
  }
}

/** Collects what must not happen on any page: console errors, failed requests, uncaught errors. */
export function watch(page: Page): { problems: string[] } {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  page.on('requestfailed', (request) => {
    // A stream the page closes on navigation (server-sent events, the WebSocket) is not a failure.
    const failure = request.failure()?.errorText ?? '';
    if (failure.includes('ERR_ABORTED')) return;
    problems.push(`request failed: ${request.method()} ${request.url()} ${failure}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400)
      problems.push(`HTTP ${response.status()}: ${response.request().method()} ${response.url()}`);
  });
  return { problems };
}

/** What a theme changes on a page: colours, so contrast; structure, names and roles stay. */
export const THEME_RULES = ['color-contrast', 'link-in-text-block'] as const;

// The minified build (650 KB): axe-core's `source` is its unminified function as text (1.5 MB), which
// each new document parsed for ~300 ms before its first scan.
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's serious and critical violations on the page, as readable lines; `rules` limits the
 * scan to those rules (a second theme of a page already scanned needs only what a theme changes:
 * `THEME_RULES`).
 */
export async function seriousViolations(page: Page, rules?: readonly string[]): Promise<string[]> {
  // Once per document: a second scan of the same page (another look of it) reuses it.
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.addScriptTag({ content: axeSource });
  // Violations only: axe then skips the details of what passed, much of a scan's time.
  const options = { resultTypes: ['violations'], ...(rules ? { runOnly: { type: 'rule', values: rules } } : {}) };
  // A string, run in the page: the test's own TypeScript has no DOM types.
  const violations = (await page.evaluate(`(async () => {
    const result = await window.axe.run(document, ${JSON.stringify(options)});
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => v.id + ' (' + v.impact + '): ' + v.help + ' - ' + v.nodes.slice(0, 5).map((n) => n.target.join(' ')).join(', '));
  })()`)) as string[];
  return violations;
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: false });
  return file;
}

/** A theme at a size: one look of a page. */
export type Look = readonly [Theme, keyof typeof VIEWPORTS];

/** Both themes at both sizes, each one change from the one before. */
export const ALL_LOOKS: readonly Look[] = [
  ['light', 'desktop'],
  ['dark', 'desktop'],
  ['dark', 'phone'],
  ['light', 'phone'],
];

/**
 * The looks a test run takes: each theme once and each size once, every axe rule at both (so dark
 * contrast and the phone layout are checked on every page), in half the screenshots and scans of
 * all four. `UI_TEST_LOOKS=all` takes all four, for a person reviewing the screenshots (not RUNNER_*: the
 * masters the tests start inherit the environment and read RUNNER_* variables as their config).
 */
export const LOOKS: readonly Look[] =
  process.env.UI_TEST_LOOKS === 'all'
    ? ALL_LOOKS
    : [
        ['light', 'desktop'],
        ['dark', 'phone'],
      ];

/**
 * Screenshots of the page as it stands in each look (`<name>-<theme>-<viewport>.png`), and axe-core's
 * serious violations in each, each prefixed with its look: every rule once per size, the rules a
 * theme changes (`THEME_RULES`) for the other theme. The page is not loaded again: the theme
 * changes through the page's own toggle and the size through the window, which the page follows
 * as it does on a phone turned or a window resized; a load with its data and a first scan cost
 * seconds, a switch a frame. `show`, when given, is scrolled into view in each look before the
 * screenshot. Ends in the first look.
 */
export async function looks(
  page: Page,
  name: string,
  options: {
    looks?: readonly Look[];
    axe?: boolean;
    show?: Locator;
    /** Asserts what must hold in each look (a layout at a size), before its screenshot. */
    check?: (look: Look) => Promise<void>;
  } = {},
): Promise<string[]> {
  const { looks: wanted = LOOKS, axe = true, show, check } = options;
  const scanned = new Set<string>();
  const violations: string[] = [];
  for (const [theme, viewport] of wanted) {
    await setLook(page, theme, viewport);
    if (show) await show.scrollIntoViewIfNeeded();
    await check?.([theme, viewport]);
    await screenshot(page, `${name}-${theme}-${viewport}`);
    if (!axe) continue;
    const found = await seriousViolations(page, scanned.has(viewport) ? THEME_RULES : undefined);
    scanned.add(viewport);
    violations.push(...found.map((v) => `${theme} ${viewport}: ${v}`));
  }
  if (wanted.length > 1) await setLook(page, wanted[0]![0], wanted[0]![1]);
  return violations;
}

/** Puts the page in a look: its size, and its theme as the toggle in the header sets it. */
export async function setLook(page: Page, theme: Theme, viewport: keyof typeof VIEWPORTS): Promise<void> {
  const size = page.viewportSize();
  const wanted = VIEWPORTS[viewport];
  if (size?.width !== wanted.width || size?.height !== wanted.height) await page.setViewportSize(wanted);
  // In the page: the toggle's own click handler (a click event, which also reaches it behind an
  // open modal dialog). A page without the toggle (the login page has no header) has nothing that
  // follows the theme but the colours of <html data-theme>, which are set as the toggle sets them.
  await page.evaluate(`(() => {
    const theme = ${JSON.stringify(theme)};
    if (document.documentElement.dataset.theme === theme) return;
    const toggle = document.querySelector('button[aria-label="Switch to ' + theme + ' theme"]');
    if (toggle) return toggle.click();
    localStorage.setItem('runner.theme', theme);
    document.documentElement.dataset.theme = theme;
  })()`);
  await page.waitForFunction(`document.documentElement.dataset.theme === ${JSON.stringify(theme)}`);
  // What follows the size or the theme in script (charts, the editor) redraws within two frames.
  await page.evaluate('new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))');
}
