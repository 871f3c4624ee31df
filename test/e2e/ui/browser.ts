// Debian's chromium driven by playwright-core, and what every UI test checks on a page: no
// console error, no failed request, no serious axe-core violation.
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { repoRoot } from '../helpers.js';

/** Where the tests write their screenshots (named in ui/README.md; gitignored). */
export const SCREENSHOTS = join(repoRoot, 'ui', 'screenshots');

export const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

export type Theme = 'light' | 'dark';

export function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
    ],
  });
}

/** A browser context with the theme chosen as a user would (the saved choice in localStorage). */
export async function context(
  browser: Browser,
  options: { theme?: Theme; viewport?: keyof typeof VIEWPORTS; origin: string; session?: Session },
): Promise<BrowserContext> {
  const ctx = await browser.newContext({
    viewport: VIEWPORTS[options.viewport ?? 'desktop'],
    baseURL: options.origin,
    storageState: options.session,
    // axe-core is injected as an inline script, which the UI's CSP would refuse.
    bypassCSP: true,
  });
  const theme = options.theme ?? 'light';
  await ctx.addInitScript(`localStorage.setItem('runner.theme', ${JSON.stringify(theme)})`);
  return ctx;
}

/** A logged-in browser's cookies (the HttpOnly session cookie among them), reused by new contexts. */
export type Session = Awaited<ReturnType<BrowserContext['storageState']>>;

/** Logs in through the login page, as a person would, and keeps the session. */
export async function logIn(browser: Browser, origin: string, username: string, password: string): Promise<Session> {
  const ctx = await context(browser, { origin });
  try {
    const page = await ctx.newPage();
    await page.goto('/login');
    await page.getByLabel('User name').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL((url) => url.pathname === '/');
    await page.getByRole('button', { name: 'Log out' }).waitFor();
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

const axeSource = (createRequire(import.meta.url)('axe-core') as { source: string }).source;

/**
 * axe-core's serious and critical violations on the page, as readable lines; `rules` limits the
 * scan to those rules (a second theme of a page already scanned needs only what a theme changes:
 * `THEME_RULES`).
 */
export async function seriousViolations(page: Page, rules?: readonly string[]): Promise<string[]> {
  await page.addScriptTag({ content: axeSource });
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
