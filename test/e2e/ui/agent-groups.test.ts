// Agent groups in the web UI, in Debian's chromium against a real master with three real agents:
// on /agent-control an admin selects two agents and adds them to a new group through the
// "Add to Group" dialog, then adds another to the now existing group; the group filter (in the URL)
// narrows /agents and /agent-control to its members; a Viewer sees the filter but not the action.
// Screenshots light and dark, desktop and phone, go to ui/screenshots/ (agent-groups-*).
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { logIn, type Look, LOOKS, looks, screenshot, seriousViolations, type Session } from './browser.js';
import { apiCall } from './fleet.js';
import { uiSuite } from './suite.js';

const ui = uiSuite({ agents: ['web-1', 'web-2', 'db-1'] });

function open(session: Session, path: string) {
  return ui.open(path, { session });
}

const DESKTOP: Look[] = [
  ['light', 'desktop'],
  ['dark', 'desktop'],
];

/** The agent names of the table rows on /agent-control. */
async function rows(page: Page): Promise<string[]> {
  return page.locator('tbody tr td:nth-child(2)').allTextContents();
}

describe('Add to Group and the group filter', () => {
  it('adds two selected agents to a new group, then one more to the existing group', async () => {
    const { page, problems } = await open(ui.admin, '/agent-control');
    await page.getByRole('checkbox', { name: 'Select web-1' }).click();
    await page.getByRole('checkbox', { name: 'Select web-2' }).click();
    await page.waitForURL((url) => url.searchParams.get('selected') === 'web-1,web-2');
    await page.getByRole('button', { name: 'Add to Group' }).click();

    const dialog = page.getByRole('dialog', { name: 'Add 2 agents to a group' });
    await dialog.waitFor();
    // No group exists yet: the dialog starts on "A new group".
    expect(await dialog.getByRole('radio', { name: 'A new group' }).isChecked()).toBe(true);
    await dialog.getByLabel('Name').fill('web');
    await dialog.getByLabel('Description').fill('the front ends');
    await screenshot(page, 'agent-groups-dialog-light-desktop');
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Add to group' }).click();
    await page.getByRole('status').filter({ hasText: 'Added 2 agents to group web (2 members).' }).waitFor();
    expect(await dialog.isVisible()).toBe(false);

    const group = await apiCall<{ description: string; members: string[] }>(ui.master, 'GET', '/agent-groups/web');
    expect(group).toMatchObject({ description: 'the front ends', members: ['web-1', 'web-2'] });

    // Now the group exists: the dialog offers it first.
    await page.getByRole('button', { name: 'Clear selection' }).click();
    await page.getByRole('checkbox', { name: 'Select db-1' }).click();
    await page.getByRole('button', { name: 'Add to Group' }).click();
    const again = page.getByRole('dialog', { name: 'Add 1 agent to a group' });
    expect(await again.getByRole('radio', { name: 'An existing group' }).isChecked()).toBe(true);
    await again.getByRole('combobox').selectOption('web');
    await again.getByRole('button', { name: 'Add to group' }).click();
    await page.getByRole('status').filter({ hasText: 'Added 1 agent to group web (3 members).' }).waitFor();
    expect((await apiCall<{ members: string[] }>(ui.master, 'GET', '/agent-groups/web')).members).toEqual([
      'db-1',
      'web-1',
      'web-2',
    ]);
    await apiCall(ui.master, 'DELETE', '/agent-groups/web/members?agents=db-1');
    // A group made elsewhere (the CLI, another tab) reaches the open page's filter live.
    await apiCall(ui.master, 'POST', '/agent-groups', { name: 'db', members: ['db-1'] });
    await page.getByLabel('Group').locator('option', { hasText: 'db (1)' }).waitFor({ state: 'attached' });
    await page.getByLabel('Group').locator('option', { hasText: 'web (2)' }).waitFor({ state: 'attached' });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('shows an API error at its field in the dialog (a bad name) and keeps it open', async () => {
    const { page, problems } = await open(ui.admin, '/agent-control?selected=db-1');
    await page.getByRole('button', { name: 'Add to Group' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add 1 agent to a group' });
    await dialog.getByRole('radio', { name: 'A new group' }).check();
    await dialog.getByLabel('Name').fill('db tier');
    await dialog.getByRole('button', { name: 'Add to group' }).click();
    // At the field the master named, which says it is invalid.
    await dialog.locator('#group-name-error').filter({ hasText: 'group name "db tier" is not valid' }).waitFor();
    expect(await dialog.getByLabel('Name').getAttribute('aria-invalid')).toBe('true');
    expect(await dialog.isVisible()).toBe(true);
    // The refused request is the one failure on this page (the ui.browser logs it too), the API's 400.
    expect(problems).toEqual([
      expect.stringMatching(/^HTTP 400: POST .*\/api\/v1\/agent-groups$/),
      'console error: Failed to load resource: the server responded with a status of 400 (Bad Request)',
    ]);
    await page.context().close();
  });

  it('filters /agents and /agent-control by group through the URL', async () => {
    const { page, problems } = await open(ui.admin, '/agents');
    await page.getByRole('heading', { name: 'db-1' }).waitFor();
    await page.getByLabel('Group').selectOption('web');
    await page.waitForURL((url) => url.searchParams.get('group') === 'web');
    await page.getByRole('status').filter({ hasText: '2 agents' }).waitFor();
    await page.getByRole('heading', { name: 'web-2' }).waitFor();
    expect(await page.getByRole('heading', { name: 'db-1' }).count()).toBe(0);
    expect(await looks(page, 'agent-groups-agents', { looks: DESKTOP })).toEqual([]);

    await page.goto('/agent-control?group=web');
    await expect.poll(() => rows(page), { timeout: 20_000 }).toEqual(['web-1', 'web-2']);
    expect(await page.getByLabel('Group').inputValue()).toBe('web');
    expect(await looks(page, 'agent-groups-control', { looks: DESKTOP })).toEqual([]);
    // On a phone the filters wrap and the dialog fits the width (its light desktop look, filled
    // in, is the first test's).
    await page.getByRole('checkbox', { name: 'Select all 2 shown' }).click();
    await page.getByRole('button', { name: 'Add to Group' }).click();
    await page.getByRole('dialog', { name: 'Add 2 agents to a group' }).waitFor();
    const others = LOOKS.filter(([theme, viewport]) => theme !== 'light' || viewport !== 'desktop');
    expect(await looks(page, 'agent-groups-dialog', { looks: others })).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('lets a Viewer filter by group but not add to one', async () => {
    await apiCall(ui.master, 'POST', '/users', { name: 'gina', role: 'viewer', password: 'viewer-password-2' });
    const viewer = await logIn(ui.browser, ui.master.origin, 'gina', 'viewer-password-2');
    const { page, problems } = await open(viewer, '/agents?group=web');
    await page.getByRole('heading', { name: 'web-1' }).waitFor();
    expect(await page.getByRole('heading', { name: 'db-1' }).count()).toBe(0);
    expect(await page.getByLabel('Group').inputValue()).toBe('web');
    await page.goto('/agent-control?selected=web-1');
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    expect(await page.getByRole('button', { name: 'Add to Group' }).count()).toBe(0);
    expect(problems.filter((p) => !p.includes('403'))).toEqual([]);
    await page.context().close();
  });
});

describe('managing a group on /agents', () => {
  beforeAll(async () => {
    await apiCall(ui.master, 'POST', '/agent-groups', {
      name: 'ops',
      description: 'to be changed',
      members: ['web-1', 'web-2', 'db-1'],
    });
  });

  it('shows the chosen group to a Viewer without any action', async () => {
    await apiCall(ui.master, 'POST', '/users', { name: 'vera', role: 'viewer', password: 'viewer-password-3' });
    const viewer = await logIn(ui.browser, ui.master.origin, 'vera', 'viewer-password-3');
    const { page, problems } = await open(viewer, '/agents?group=ops');
    const panel = page.getByRole('region', { name: 'ops: description and members' });
    await panel.getByText('to be changed').waitFor();
    expect(await panel.getByRole('list', { name: 'Members of ops' }).getByRole('link').allTextContents()).toEqual([
      'db-1',
      'web-1',
      'web-2',
    ]);
    expect(await panel.getByRole('button').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('looks right with its actions in both themes at both sizes', async () => {
    const { page, problems } = await open(ui.admin, '/agents?group=ops');
    const panel = page.getByRole('region', { name: 'ops: description and members' });
    await panel.getByRole('button', { name: 'Remove db-1 from ops' }).waitFor();
    expect(await looks(page, 'agent-groups-manage')).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('edits the description, takes a member out and deletes the group', async () => {
    const { page, problems } = await open(ui.admin, '/agents?group=ops');
    const panel = page.getByRole('region', { name: 'ops: description and members' });
    await page.getByRole('status').filter({ hasText: '3 agents' }).waitFor();

    await panel.getByRole('button', { name: 'Edit description' }).click();
    await panel.getByRole('textbox', { name: 'Description' }).fill('the operators');
    await panel.getByRole('button', { name: 'Save' }).click();
    await panel.getByText('the operators', { exact: true }).waitFor();
    expect((await apiCall<{ description: string }>(ui.master, 'GET', '/agent-groups/ops')).description).toBe(
      'the operators',
    );

    await panel.getByRole('button', { name: 'Remove db-1 from ops' }).click();
    await page.getByRole('status').filter({ hasText: '2 agents' }).waitFor();
    await expect
      .poll(() => panel.getByRole('list', { name: 'Members of ops' }).getByRole('link').allTextContents())
      .toEqual(['web-1', 'web-2']);
    expect(await page.getByRole('heading', { name: 'db-1' }).count()).toBe(0);
    expect((await apiCall<{ members: string[] }>(ui.master, 'GET', '/agent-groups/ops')).members).toEqual([
      'web-1',
      'web-2',
    ]);

    // A change made elsewhere reaches the panel live.
    await apiCall(ui.master, 'PATCH', '/agent-groups/ops', { description: 'changed by the CLI' });
    await panel.getByText('changed by the CLI').waitFor();

    page.once('dialog', (dialog) => void dialog.accept());
    await panel.getByRole('button', { name: 'Delete group' }).click();
    await page.waitForURL((url) => !url.searchParams.has('group'));
    await page.getByRole('heading', { name: 'db-1' }).waitFor();
    expect(await panel.count()).toBe(0);
    const groups = await apiCall<{ groups: { name: string }[] }>(ui.master, 'GET', '/agent-groups');
    expect(groups.groups.map((g) => g.name)).not.toContain('ops');
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('a group deleted elsewhere while its filter is open', () => {
  it("says the group is gone with the API's message and clears the filter", async () => {
    const name = 'gone';
    await apiCall(ui.master, 'POST', '/agent-groups', { name, members: ['web-1'] });
    const { page, problems } = await open(ui.admin, `/agents?group=${name}`);
    await page.getByRole('status').filter({ hasText: '1 agent' }).waitFor();
    expect(await page.getByRole('heading', { name: 'db-1' }).count()).toBe(0);

    // Deleted by another tab or the CLI: the group update reloads the filtered list, which the API refuses.
    await apiCall(ui.master, 'DELETE', `/agent-groups/${name}`);
    const alert = page.getByRole('alert').filter({ hasText: `Group ${name} no longer exists` });
    await alert.getByText(`unknown agent group "${name}"`).waitFor();
    await page.waitForURL((url) => !url.searchParams.has('group'));
    // The whole fleet is listed again.
    await page.getByRole('heading', { name: 'db-1' }).waitFor();
    expect(await page.getByRole('region', { name: `${name}: description and members` }).count()).toBe(0);
    expect(await looks(page, 'agent-groups-gone')).toEqual([]);
    // The refused reload is the one failure: the API's 400 (which the browser logs on its own); the
    // page's code logs and throws nothing.
    expect(problems).toEqual([
      expect.stringMatching(new RegExp(`^HTTP 400: GET .*/api/v1/agents\\?.*group=${name}`)),
      'console error: Failed to load resource: the server responded with a status of 400 (Bad Request)',
    ]);
    await alert.getByRole('button', { name: 'Dismiss' }).click();
    expect(await alert.count()).toBe(0);
    await page.context().close();
  });
});
