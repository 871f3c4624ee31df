// Enrolment in the agent details (Overview): when the agent was enrolled, when its credential was
// revoked, and a Revoke action for roles with agent:manage, in Debian's chromium against a real
// master with real agents. Revoke (after a confirm naming the agent and what it does) disconnects
// the agent process for good, and the Overview and the agent's card show it; a Viewer has no Revoke.
// Screenshots light and dark at both sizes go to ui/screenshots/ (agent-enrolment-*).
import { describe, expect, it } from 'vitest';
import { finished } from '../helpers.js';
import { logIn, looks } from './browser.js';
import { apiCall } from './fleet.js';
import { uiSuite } from './suite.js';

const ui = uiSuite({ agents: ['rev-1', 'keep-1'] });

interface ShownAgent {
  status: string;
  enrolled_at: string | null;
  revoked_at: string | null;
}

describe('enrolment in the agent details', () => {
  it('shows a Viewer when the agent was enrolled, with no Revoke', async () => {
    await apiCall(ui.master, 'POST', '/users', { name: 'val', role: 'viewer', password: 'viewer-password-4' });
    const viewer = await logIn(ui.browser, ui.master.origin, 'val', 'viewer-password-4');
    const { page, problems } = await ui.open('/agents?agent=keep-1', { session: viewer });
    const dialog = page.getByRole('dialog', { name: 'Agent keep-1' });
    await dialog.getByText(/^enrolled \w+ \d+, 2\d{3}/).waitFor();
    expect(await dialog.getByRole('button', { name: 'Revoke keep-1' }).count()).toBe(0);
    expect(problems.filter((p) => !p.includes('403'))).toEqual([]);
    await page.context().close();
  });

  it('offers Revoke to an admin', async () => {
    const { page, problems } = await ui.open('/agents?agent=keep-1');
    const dialog = page.getByRole('dialog', { name: 'Agent keep-1' });
    await dialog.getByRole('button', { name: 'Revoke keep-1' }).waitFor();
    expect(await looks(page, 'agent-enrolment-enrolled')).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('revokes after a confirm: the agent is disconnected and refused, the Overview and the card show it', async () => {
    const before = await apiCall<ShownAgent>(ui.master, 'GET', '/agents/rev-1');
    expect(before).toMatchObject({ status: expect.not.stringMatching(/offline/), revoked_at: null });
    expect(Date.parse(String(before.enrolled_at))).toBeGreaterThan(Date.now() - 10 * 60_000);

    const { page, problems } = await ui.open('/agents?agent=rev-1');
    const dialog = page.getByRole('dialog', { name: 'Agent rev-1' });
    // Dismissing the confirm changes nothing.
    page.once('dialog', (d) => void d.dismiss());
    await dialog.getByRole('button', { name: 'Revoke rev-1' }).click();
    expect((await apiCall<ShownAgent>(ui.master, 'GET', '/agents/rev-1')).revoked_at).toBeNull();

    const ending = finished(ui.agents['rev-1']); // before the revoke: the agent may be gone before the answer
    let asked = '';
    page.once('dialog', (d) => {
      asked = d.message();
      void d.accept();
    });
    await dialog.getByRole('button', { name: 'Revoke rev-1' }).click();
    await dialog.getByRole('status').filter({ hasText: 'The credential of rev-1 was revoked' }).waitFor();
    expect(asked).toContain('Revoke agent rev-1?');
    expect(asked).toContain('disconnected');
    expect(asked).toContain('`runner agent remove rev-1`');

    // The real agent process was told not to reconnect, and ended.
    const ended = await ending;
    expect(ended.stderr).toMatch(/the credential of agent rev-1 was revoked/);
    const after = await apiCall<ShownAgent>(ui.master, 'GET', '/agents/rev-1');
    expect(after).toMatchObject({ status: 'offline', revoked_at: expect.any(String) });

    // The Overview, loaded again, shows the revocation and no Revoke.
    await dialog.getByText(/^revoked \w+ \d+, 2\d{3}.*refused until/).waitFor();
    expect(await dialog.getByText('runner agent remove rev-1', { exact: true }).count()).toBe(1);
    expect(await dialog.getByRole('button', { name: 'Revoke rev-1' }).count()).toBe(0);

    // The card says revoked (the list reloads on the disconnection).
    await dialog.getByRole('button', { name: 'Close' }).click();
    const card = page.getByRole('article', { name: 'rev-1' });
    await card.getByText('revoked', { exact: true }).waitFor();
    expect(await card.getByRole('button', { name: 'Restart rev-1' }).isDisabled()).toBe(true);
    expect(await page.getByRole('article', { name: 'keep-1' }).getByText('revoked', { exact: true }).count()).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  }, 60_000);

  it('shows a revoked agent in its details and on its card', async () => {
    const { page, problems } = await ui.open('/agents?agent=rev-1');
    const dialog = page.getByRole('dialog', { name: 'Agent rev-1' });
    await dialog.getByText(/^revoked \w+ \d+, 2\d{3}/).waitFor();
    expect(await looks(page, 'agent-enrolment-revoked')).toEqual([]);
    await dialog.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('article', { name: 'rev-1' }).getByText('revoked', { exact: true }).waitFor();
    expect(await looks(page, 'agent-enrolment-card')).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
