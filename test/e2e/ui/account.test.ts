// A user's own account in Debian's chromium against a real master (auth on): the password change
// of the Settings page's Profile section, which signs the user's other sessions out and keeps
// this one; screenshots of the section light and dark at both sizes.
import { beforeAll, describe, expect, it } from 'vitest';
import { context, logIn, screenshot, seriousViolations, watch } from './browser.js';
import { apiCall } from './fleet.js';
import { uiSuite } from './suite.js';

const ui = uiSuite();

beforeAll(async () => {
  await apiCall(ui.master, 'POST', '/users', { name: 'pat', role: 'viewer', password: 'pats-first-password' });
});

describe('the password change in Settings', () => {
  it("changes a viewer's own password, keeps this session and signs the other out", async () => {
    const here = await logIn(ui.browser, ui.master.origin, 'pat', 'pats-first-password');
    const elsewhere = await logIn(ui.browser, ui.master.origin, 'pat', 'pats-first-password');
    const ctx = await context(ui.browser, { origin: ui.master.origin, session: here });
    const page = await ctx.newPage();
    const { problems } = watch(page);
    await page.goto('/settings');
    const form = page.getByRole('form', { name: 'Change your password' });
    await form.getByLabel('Current password').fill('pats-first-password');
    await form.getByLabel('New password', { exact: true }).fill('pats-second-password');
    await form.getByLabel('New password again').fill('pats-other-password');
    expect(await form.getByText('The two new passwords differ.').isVisible()).toBe(true);
    expect(await form.getByRole('button', { name: 'Change password' }).isDisabled()).toBe(true);
    await form.getByLabel('New password again').fill('pats-second-password');
    await form.getByRole('button', { name: 'Change password' }).click();
    await form.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor();
    // This session goes on: a page that calls the API still works (no return to the login page).
    await page.goto('/executions');
    await page.getByRole('heading', { name: 'Executions' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/executions');
    expect(problems).toEqual([]);
    // The other one was signed out.
    const other = await (await context(ui.browser, { origin: ui.master.origin, session: elsewhere })).newPage();
    await other.goto('/settings');
    await other.waitForURL((url) => url.pathname === '/login');
    await other.context().close();
    // And the new password is the one that logs in.
    await logIn(ui.browser, ui.master.origin, 'pat', 'pats-second-password');
    await ctx.close();
    // Four logins (scrypt each) and three pages on a shared machine.
  }, 90_000);

  it('shows the API message for a wrong current password', async () => {
    const page = await (await context(ui.browser, { origin: ui.master.origin, session: ui.admin })).newPage();
    await page.goto('/settings');
    const form = page.getByRole('form', { name: 'Change your password' });
    await form.getByLabel('Current password').fill('not-the-password');
    await form.getByLabel('New password', { exact: true }).fill('a-new-password');
    await form.getByLabel('New password again').fill('a-new-password');
    await form.getByRole('button', { name: 'Change password' }).click();
    await form.getByText('the current password is not right').waitFor();
    expect(new URL(page.url()).pathname).toBe('/settings');
    await page.context().close();
  });

  for (const theme of ['light', 'dark'] as const) {
    for (const viewport of ['desktop', 'phone'] as const) {
      it(`looks right in ${theme} at ${viewport} size`, async () => {
        const page = await (
          await context(ui.browser, { origin: ui.master.origin, session: ui.admin, theme, viewport })
        ).newPage();
        const { problems } = watch(page);
        await page.goto('/settings');
        const form = page.getByRole('form', { name: 'Change your password' });
        await form.getByLabel('New password', { exact: true }).fill('one-password');
        await form.getByLabel('New password again').fill('another-one');
        await form.scrollIntoViewIfNeeded();
        await screenshot(page, `settings-password-${theme}-${viewport}`);
        expect(await seriousViolations(page)).toEqual([]);
        expect(problems).toEqual([]);
        await page.context().close();
      });
    }
  }
});
