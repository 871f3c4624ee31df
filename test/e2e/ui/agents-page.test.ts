// The agent dashboard (service.md's per-agent monitoring page) on real agents, in Debian's chromium:
// Online is every connected agent (warning and error are badges on it), an offline agent shows no
// stale gauge, each status filter says how many agents it holds, Restart and Remove ask first, and
// Details opens the tabs service.md lists; the agents management list (/agents) adds the agent-group
// filter, which the monitoring page leaves out. Screenshots `agents-page-*` in light and dark,
// desktop and phone.
import type { Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { looks, screenshot, seriousViolations } from './browser.js';
import { apiCall } from './fleet.js';
import { uiSuite } from './suite.js';

// Pages of a master shared with other work on two cores: generous ceilings.
vi.setConfig({ testTimeout: 120_000 });

const ui = uiSuite({ agents: ['up-1', 'up-2', 'down-1'], timeoutMs: 120_000 });

interface ApiAgent {
  name: string;
  status: string;
}

async function apiAgents(): Promise<ApiAgent[]> {
  return (await apiCall<{ agents: ApiAgent[] }>(ui.master, 'GET', '/agents?limit=1000')).agents;
}

const cardNames = (page: Page) => page.getByRole('article').locator('h2').allTextContents();
const filterButton = (page: Page, label: RegExp) =>
  page.getByRole('group', { name: 'Status' }).getByRole('button', { name: label });

describe('the agent dashboard and the agents list', () => {
  it('counts each filter, keeps connected agents under Online and shows no gauge for an offline one', async () => {
    ui.agents['down-1']?.kill('SIGKILL');
    await expect
      .poll(async () => (await apiAgents()).find((a) => a.name === 'down-1')?.status, { timeout: 30_000 })
      .toBe('offline');
    const { page, problems } = await ui.open('/agent-dashboard');
    await page.getByRole('article', { name: 'down-1' }).waitFor();
    await page.getByRole('heading', { name: 'Agent dashboard', level: 1 }).waitFor();
    const agents = await apiAgents();
    const connected = agents.filter((a) => a.status !== 'offline').map((a) => a.name);
    // The counts are the API's: Online counts every connected agent, warnings included.
    await expect.poll(() => filterButton(page, /^All/).textContent()).toMatch(new RegExp(`All\\s+${agents.length}`));
    expect(await filterButton(page, /^Online/).textContent()).toMatch(new RegExp(`Online\\s+${connected.length}`));
    expect(await filterButton(page, /^Offline/).textContent()).toMatch(/Offline\s+1/);

    await filterButton(page, /^Online/).click();
    await page.waitForURL((url) => url.searchParams.get('status') === 'online');
    await expect.poll(async () => (await cardNames(page)).sort()).toEqual(connected.sort());
    // Each connected card says Online, whatever its load.
    for (const name of connected)
      await page
        .getByRole('article', { name })
        .getByText(/^online$/i)
        .waitFor();

    await filterButton(page, /^Offline/).click();
    await expect.poll(() => cardNames(page)).toEqual(['down-1']);
    const down = page.getByRole('article', { name: 'down-1' });
    expect(await down.getByRole('meter').count()).toBe(0);
    await down.getByText(/^Not connected: no current figures/).waitFor();

    // Details: service.md's tabs, the current one kept in the URL.
    await filterButton(page, /^All/).click();
    await page.getByRole('button', { name: 'Details of up-1' }).click();
    const details = page.getByRole('dialog', { name: 'Agent up-1' });
    await details.getByRole('tab', { name: 'Overview' }).waitFor();
    expect(await details.getByRole('tab').allTextContents()).toEqual([
      'Overview',
      'Processes',
      'Network',
      'Disk',
      'Logs',
      'Execute',
    ]);
    await details.getByRole('tab', { name: 'Disk' }).click();
    await page.waitForURL((url) => url.searchParams.get('tab') === 'disk');
    expect(await details.getByRole('tab', { name: 'Disk' }).getAttribute('aria-selected')).toBe('true');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('offers the group filter on the management list, not on the monitoring page', async () => {
    await apiCall(ui.master, 'POST', '/agent-groups', { name: 'ups', members: ['up-1', 'up-2'] });
    const manage = await ui.open('/agents?group=ups');
    await manage.page.getByRole('region', { name: 'ups: description and members' }).waitFor();
    expect(await manage.page.getByLabel('Group').inputValue()).toBe('ups');
    await manage.page.context().close();
    // The same address on the monitoring page: every agent, no group filter and no group panel.
    const monitor = await ui.open('/agent-dashboard?group=ups');
    await monitor.page.getByRole('article', { name: 'down-1' }).waitFor();
    expect(await monitor.page.getByLabel('Group').count()).toBe(0);
    expect(await monitor.page.getByRole('region', { name: /description and members/ }).count()).toBe(0);
    expect([...manage.problems, ...monitor.problems]).toEqual([]);
    await monitor.page.context().close();
  });

  it('asks before restarting or removing an agent, and a cancel does nothing', async () => {
    const { page, problems } = await ui.open('/agent-dashboard?q=up-1');
    const card = page.getByRole('article', { name: 'up-1' });
    await card.getByRole('button', { name: 'Restart up-1' }).click();
    const dialog = page.getByRole('dialog', { name: 'Restart up-1?' });
    await dialog.waitFor();
    await screenshot(page, 'agents-page-restart-confirm-light-desktop');
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.getByText('up-1 is restarting.').count()).toBe(0);

    await card.getByRole('button', { name: 'Remove up-1' }).click();
    await page.getByRole('dialog', { name: 'Remove up-1?' }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog', { name: 'Remove up-1?' }).waitFor({ state: 'hidden' });
    expect((await apiAgents()).some((a) => a.name === 'up-1')).toBe(true);

    await card.getByRole('button', { name: 'Restart up-1' }).click();
    await dialog.getByRole('button', { name: 'Restart up-1' }).click();
    await page.getByText('up-1 is restarting.').waitFor({ timeout: 20_000 });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('draws the counts and an offline card in both themes at both sizes, axe clean', async () => {
    const { page, problems } = await ui.open('/agent-dashboard');
    await page
      .getByRole('article', { name: 'down-1' })
      .getByText(/^offline$/i)
      .waitFor();
    expect(await looks(page, 'agents-page')).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
