// The agents page on real agents, in Debian's chromium: Online is every connected agent (warning
// and error are badges on it), an offline agent shows no stale gauge, each status filter says how
// many agents it holds, and Restart and Remove ask first. Screenshots `agents-page-*` in light and
// dark, desktop and phone.
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

describe('the agents page', () => {
  it('counts each filter, keeps connected agents under Online and shows no gauge for an offline one', async () => {
    ui.agents['down-1']?.kill('SIGKILL');
    await expect
      .poll(async () => (await apiAgents()).find((a) => a.name === 'down-1')?.status, { timeout: 30_000 })
      .toBe('offline');
    const { page, problems } = await ui.open('/agents');
    await page.getByRole('article', { name: 'down-1' }).waitFor();
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
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('asks before restarting or removing an agent, and a cancel does nothing', async () => {
    const { page, problems } = await ui.open('/agents?q=up-1');
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
    const { page, problems } = await ui.open('/agents');
    await page
      .getByRole('article', { name: 'down-1' })
      .getByText(/^offline$/i)
      .waitFor();
    expect(await looks(page, 'agents-page')).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
