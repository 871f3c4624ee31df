// Settings in Debian's chromium against a real master (auth on): the tabs (profile, users, tokens,
// roles, audit, configuration) kept in the URL; the password change of the Profile tab, which signs
// the user's other sessions out and keeps this one; the Roles tab's permission table as the API
// holds it; the audit log filtered by actor, event and time in the URL; no way to remove yourself
// (in the page and at the master). Screenshots of the tabs light and dark at both sizes, axe clean.
import { beforeAll, describe, expect, it } from 'vitest';
import { context, logIn, looks, watch } from './browser.js';
import { apiCall } from './fleet.js';
import { uiSuite } from './suite.js';

const ui = uiSuite();

beforeAll(async () => {
  await apiCall(ui.master, 'POST', '/users', { name: 'pat', role: 'viewer', password: 'pats-first-password' });
  await apiCall(ui.master, 'POST', '/users', { name: 'sam', role: 'admin', password: 'sams-own-password-1' });
});

/** The master's answer to a call as a user by their password (Basic), status and body. */
async function callAs(user: string, password: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${ui.master.origin}/api/v1${path}`, {
    method,
    headers: {
      authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.text() };
}

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
});

describe('the Settings tabs', () => {
  it('shows the permission table of the API on the Roles tab, the tab kept in the URL', async () => {
    const roles = await apiCall<{ roles: { name: string; permissions: string[] }[]; permissions: { name: string }[] }>(
      ui.master,
      'GET',
      '/auth/roles',
    );
    const { page, problems } = await ui.open('/settings');
    await page.getByRole('tab', { name: 'Roles' }).click();
    await page.waitForURL((url) => url.searchParams.get('tab') === 'roles');
    const table = page.getByRole('region', { name: 'Permissions of each role' });
    await table.getByRole('rowheader').first().waitFor();
    // Each cell says whether the role holds the permission: exactly what the API says, no more.
    for (const role of roles.roles) {
      const held = await table.getByText(`${role.name} has it`, { exact: true }).count();
      expect(held, role.name).toBe(role.permissions.length);
    }
    expect(await table.getByRole('rowheader').count()).toBe(roles.permissions.length);
    const operator = roles.roles.find((r) => r.name === 'operator')!;
    const executeRow = table.getByRole('row').filter({ hasText: 'workflow:execute' });
    expect(await executeRow.getByText('operator has it', { exact: true }).count()).toBe(
      operator.permissions.includes('workflow:execute') ? 1 : 0,
    );
    // Arrow keys move between tabs (the tabs pattern), and the URL follows.
    await page.getByRole('tab', { name: 'Roles' }).focus();
    await page.keyboard.press('ArrowRight');
    await page.waitForURL((url) => url.searchParams.get('tab') === 'audit');
    expect(await page.getByRole('tab', { name: 'Audit log' }).getAttribute('aria-selected')).toBe('true');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('filters the audit log by actor, event and time, kept in the URL across a reload', async () => {
    // Records of two actors: sam's own change (a token) and the test's user additions (the local credential).
    expect(
      (await callAs('sam', 'sams-own-password-1', 'POST', '/auth/tokens', { name: 'sams', role: 'viewer' })).status,
    ).toBe(201);
    const { page, problems } = await ui.open('/settings?tab=audit');
    const table = page.getByRole('table', { name: 'Audit records' });
    await table.getByRole('row').nth(1).waitFor();
    await page.getByLabel('Event').fill('user.add');
    await page.waitForURL((url) => url.searchParams.get('event') === 'user.add');
    // The rows before the filter's answer hold user.add too: wait for a table of user.add alone.
    const eventsShown = async () =>
      new Set((await table.locator('tbody tr td:nth-child(3)').allInnerTexts()).map((e) => e.trim()));
    await expect.poll(eventsShown, { timeout: 20_000 }).toEqual(new Set(['user.add']));
    await table.getByRole('row').filter({ hasText: 'add user sam (admin)' }).waitFor();
    expect(await table.locator('tbody tr').count()).toBeGreaterThanOrEqual(2);
    await page.getByLabel('Time').selectOption('1h');
    await page.waitForURL((url) => url.searchParams.get('since') === '1h');
    await page.reload();
    expect(await page.getByLabel('Event').inputValue()).toBe('user.add');
    expect(await page.getByLabel('Time').inputValue()).toBe('1h');
    await table.getByRole('row').filter({ hasText: 'add user pat (viewer)' }).waitFor();
    // A click on an actor shows only what they did; a filter nothing matches says so.
    await page.getByLabel('Event').fill('');
    await page.getByLabel('Actor').fill('sam');
    await page.waitForURL((url) => url.searchParams.get('user') === 'sam' && !url.searchParams.has('event'));
    await table.getByRole('row').nth(1).waitFor();
    await page.waitForFunction(
      `[...document.querySelectorAll('table[aria-label="Audit records"] tbody tr td:nth-child(2)')].every((c) => c.innerText.trim() === 'sam')`,
    );
    await page.getByLabel('Actor').fill('nobody-did-this');
    await page.getByRole('heading', { name: 'No audit record matches these filters' }).waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('shows the master’s validation error at the field it names, in the user and token forms', async () => {
    const { page, problems: seen } = await ui.open('/settings?tab=users');
    const users = page.getByRole('form', { name: 'Add a user' });
    await users.getByLabel('User name').fill('no spaces allowed');
    await users.getByRole('button', { name: 'Add user' }).click();
    const nameError = users.locator('#user-name-error');
    await nameError.getByText('is not valid').waitFor();
    expect(await users.getByLabel('User name').getAttribute('aria-invalid')).toBe('true');
    await users.getByLabel('User name').fill('quinn');
    await users.getByLabel('Password (empty: generated)').fill('short');
    await users.getByRole('button', { name: 'Add user' }).click();
    // The password policy's own words (12 characters by default), not a schema's "length >= 8".
    await users.locator('#user-password-error').getByText('a password needs at least 12 characters').waitFor();
    // The name is fine now: its error is gone, and nothing was added.
    expect(await nameError.count()).toBe(0);
    expect(await users.getByLabel('User name').getAttribute('aria-invalid')).toBe('false');
    expect(await looks(page, 'settings-user-form-error', { show: users })).toEqual([]);
    await page.getByRole('tab', { name: 'API tokens' }).click();
    const tokens = page.getByRole('form', { name: 'Create an API token' });
    await tokens.getByLabel('Name').fill('ci-later');
    await tokens.getByLabel('Expires after').fill('whenever');
    await tokens.getByRole('button', { name: 'Create token' }).click();
    await tokens
      .locator('#token-expires-error')
      .getByText(/^expires: /)
      .waitFor();
    expect(await tokens.getByLabel('Expires after').getAttribute('aria-invalid')).toBe('true');
    // The refusals were the master's (400s), nothing else went wrong.
    // The refusals were the master's 400s (the browser logs each), nothing else went wrong.
    const expected = (p: string) =>
      /HTTP 400: POST .*\/api\/v1\/(users|auth\/tokens)$/.test(p) || p.includes('status of 400 (Bad Request)');
    expect(seen.filter((p) => !expected(p))).toEqual([]);
    expect(seen.filter((p) => p.startsWith('HTTP 400'))).toHaveLength(3);
    await page.context().close();
  });

  it('offers no way to remove yourself, and the master refuses it too', async () => {
    const { page, problems } = await ui.open('/settings?tab=users');
    const own = page.getByRole('row').filter({ hasText: 'admin (you)' });
    const remove = own.getByRole('button', { name: 'Remove' });
    await remove.waitFor();
    expect(await remove.isDisabled()).toBe(true);
    expect(await own.getByText('Another admin can remove you').isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Remove pat' }).isEnabled()).toBe(true);
    // Removing another asks first (the kit's confirm dialog); Cancel removes no one.
    await page.getByRole('button', { name: 'Remove pat' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove pat?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await page.getByRole('row').filter({ hasText: 'pat' }).count()).toBe(1);
    expect(problems).toEqual([]);
    await page.context().close();
    // sam is an admin, not the last one: only being sam stops sam removing sam.
    const self = await callAs('sam', 'sams-own-password-1', 'DELETE', '/users/sam');
    expect(self.status).toBe(409);
    expect(self.body).toContain('it is you');
    expect((await callAs('sam', 'sams-own-password-1', 'GET', '/auth/me')).status).toBe(200);
  });

  it('looks right in both themes at both sizes: profile, roles and audit tabs, axe clean', async () => {
    const { page, problems } = await ui.open('/settings');
    const form = page.getByRole('form', { name: 'Change your password' });
    await form.getByLabel('New password', { exact: true }).fill('one-password');
    await form.getByLabel('New password again').fill('another-one');
    expect(await looks(page, 'settings-password', { show: form })).toEqual([]);
    await page.getByRole('tab', { name: 'Roles' }).click();
    const roles = page.getByRole('region', { name: 'Permissions of each role' });
    await roles.getByRole('rowheader').first().waitFor();
    // At every size the table fits: nothing to scroll sideways to see a role.
    const fits = async () => {
      const overflow = await roles.evaluate((e) => {
        const el = e as { scrollWidth: number; clientWidth: number };
        return el.scrollWidth - el.clientWidth;
      });
      expect(overflow).toBeLessThanOrEqual(1);
    };
    expect(await looks(page, 'settings-roles', { check: fits })).toEqual([]);
    await page.getByRole('tab', { name: 'Audit log' }).click();
    await page.getByRole('table', { name: 'Audit records' }).getByRole('row').nth(1).waitFor();
    expect(await looks(page, 'settings-audit')).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
