// The frame around every page and the account pages, in Debian's chromium against a real master:
// the phone menu closes with Escape and with a tap on its backdrop; an alert can be dismissed (a
// master whose disk threshold is 1% fires one); a new API token has a Copy button that copies it.
// Screenshots `shell-*` in light and dark.
import { describe, expect, it, vi } from 'vitest';
import { type Look, looks, screenshot } from './browser.js';
import { uiSuite } from './suite.js';

// Pages of a master shared with other work on two cores: generous ceilings.
vi.setConfig({ testTimeout: 120_000 });

const ui = uiSuite({
  env: { RUNNER_HEALTH_DISK_THRESHOLD: '1', RUNNER_DASHBOARD_METRICS_INTERVAL: '1' },
  timeoutMs: 120_000,
});

describe('the phone menu', () => {
  it('opens over a backdrop and closes with Escape or a tap beside it, in both themes', async () => {
    const { page, problems } = await ui.open('/executions', { viewport: 'phone' });
    const menu = page.getByRole('button', { name: 'Menu', exact: true });
    const nav = page.getByRole('navigation', { name: 'Main' });
    await menu.click();
    await nav.waitFor();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    const phone: Look[] = [
      ['light', 'phone'],
      ['dark', 'phone'],
    ];
    expect(await looks(page, 'shell-menu', { looks: phone })).toEqual([]);
    await page.keyboard.press('Escape');
    await nav.waitFor({ state: 'hidden' });
    expect(await menu.getAttribute('aria-expanded')).toBe('false');

    await menu.click();
    await nav.waitFor();
    // A tap right of the 240 px menu lands on the backdrop.
    await page.mouse.click(330, 500);
    await nav.waitFor({ state: 'hidden' });
    expect(page.url()).toContain('/executions');
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('alerts', () => {
  it('can be dismissed', async () => {
    const { page, problems } = await ui.open('/');
    const alert = page.getByRole('alert').filter({ hasText: /disk/i });
    await alert.waitFor({ timeout: 30_000 });
    await screenshot(page, 'shell-alert-light-desktop');
    await alert.getByRole('button', { name: 'Dismiss' }).click();
    await alert.waitFor({ state: 'hidden' });
    // Still dismissed on another page of the tab.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Executions' }).click();
    await page.getByRole('heading', { name: 'Executions' }).waitFor();
    expect(await page.getByRole('alert').filter({ hasText: /disk/i }).count()).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('settings', () => {
  // That an admin cannot remove themself is account.test.ts's (the Users tab).
  it('copies a new API token with its Copy button', async () => {
    const { page, problems } = await ui.open('/settings?tab=tokens');
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ui.master.origin });

    const tokens = page.getByRole('form', { name: 'Create an API token' });
    await tokens.getByLabel('Name').fill('copied');
    await tokens.getByRole('button', { name: 'Create token' }).click();
    const token = (await page.locator('code.token').textContent())!;
    await page.getByRole('button', { name: 'Copy the token' }).click();
    await page.getByRole('button', { name: 'Copy the token' }).getByText('Copied').waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as ClipboardPage).navigator.clipboard.readText())).toBe(
      token,
    );
    await screenshot(page, 'shell-token-copied-light-desktop');
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

/** What the function run in the page uses of it (the test's own TypeScript has no DOM types). */
interface ClipboardPage {
  navigator: { clipboard: { readText(): Promise<string> } };
}
