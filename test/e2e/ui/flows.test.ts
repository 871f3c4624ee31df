// What an operator does in the web UI, in Debian's chromium against a real master with real
// agents (auth on, as by default): log in, see the dashboard's counts equal the API's, see an
// agent go offline, run a command on several agents at once, start a run from pasted YAML, watch
// its log stream and cancel it, read an agent's log live in its Logs tab, and, as a Viewer, find no
// Execute and no Restart.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { context, logIn, looks, watch, type Session } from './browser.js';
import { apiCall, FAST } from './fleet.js';
import { uiSuite } from './suite.js';

const ui = uiSuite({ agents: ['web-1', 'web-2', 'doomed'] });
const { fleet } = ui;

/** `session` undefined: a visitor without one. */
function open(session: Session | undefined, path: string): Promise<{ page: Page; problems: string[] }> {
  return ui.open(path, { session: session ?? null });
}

describe('the web UI with a real master', () => {
  it('sends a visitor without a session to the login page and back to where they were going', async () => {
    const ctx = await context(ui.browser, { origin: ui.master.origin });
    const page = await ctx.newPage();
    await page.goto('/executions?status=failed');
    await page.waitForURL((url) => url.pathname === '/login');
    expect(new URL(page.url()).searchParams.get('next')).toBe('/executions?status=failed');
    await page.getByLabel('User name').fill('admin');
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/invalid|password|credentials/i);
    await page.getByLabel('Password').fill(ui.master.adminPassword);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL((url) => url.pathname === '/executions' && url.searchParams.get('status') === 'failed');
    await page.getByRole('button', { name: 'Log out' }).waitFor();
    await ctx.close();
  });

  it('shows the dashboard counts the API gives', async () => {
    const { page, problems } = await open(ui.admin, '/');
    const api = await apiCall<{ agents: { total: number; online: number }; executions: { total: number } }>(
      ui.master,
      'GET',
      '/dashboard',
    );
    await expect.poll(() => page.getByTestId('count-agents').textContent()).toBe(String(api.agents.total));
    expect(await page.getByTestId('count-online-agents').textContent()).toBe(String(api.agents.online));
    expect(await page.getByTestId('count-executions').textContent()).toBe(String(api.executions.total));
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('shows an agent going offline within one heartbeat timeout', async () => {
    const { page, problems } = await open(ui.admin, '/agents?q=doomed');
    const card = page.getByRole('article', { name: 'doomed' });
    await card
      .getByText(/online|warning/i)
      .first()
      .waitFor();
    ui.agents.doomed?.kill('SIGKILL');
    const killed = Date.now();
    // Live: agent_update / agent.disconnected over the WebSocket, no reload.
    await card.getByText('Offline').waitFor({ timeout: (Number(FAST.RUNNER_AGENT_HEARTBEAT_TIMEOUT) + 2) * 1000 });
    expect(Date.now() - killed).toBeLessThan((Number(FAST.RUNNER_AGENT_HEARTBEAT_TIMEOUT) + 2) * 1000);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("runs a command on several agents and shows each agent's output and exit code", async () => {
    const { page, problems } = await open(ui.admin, '/agent-control?q=web');
    await page.getByRole('checkbox', { name: 'Select all 2 shown' }).click();
    await page.getByText('2 selected').waitFor();
    await page
      .getByLabel('Command', { exact: true })
      .fill('echo "out from $RUNNER_TEST_MARK" && echo err >&2 && exit 3');
    await page.getByRole('button', { name: 'Run on 2 agents' }).click();
    for (const name of ['web-1', 'web-2']) {
      const result = page.getByRole('region', { name: `Output of ${name}` });
      await result.getByText('exit code 3').waitFor();
      expect(await result.locator('pre').first().textContent()).toContain('out from');
      expect(await result.locator('pre.stderr').textContent()).toContain('err');
    }
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('starts a run from pasted YAML, streams its log and cancels it', async () => {
    const { page, problems } = await open(ui.admin, '/executions?new=1');
    const yaml = [
      'version: "1.0"',
      'tasks:',
      '  - name: slow',
      '    exec:',
      '      script: |',
      '        log.info("started the slow task")',
      '        exec.run("sleep 30")',
    ].join('\n');
    const form = page.getByRole('form', { name: 'New run' });
    await form.getByLabel('Workflow', { exact: true }).fill(yaml);
    await form.getByLabel('Name (optional)').fill('from-the-ui');
    await form.getByRole('button', { name: 'Start' }).click();
    await page.waitForURL(/\/executions\/[^/?]+$/);
    await page.getByText('started the slow task').waitFor({ timeout: 15_000 });
    await page.getByRole('heading', { name: 'from-the-ui' }).waitFor();
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel the run' }).click();
    await page.getByText('Cancelled by', { exact: true }).waitFor({ timeout: 20_000 });
    await page.getByText('cancelled', { exact: true }).first().waitFor();
    const id = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    const run = await apiCall<{ status: string; cancelled_by?: string }>(ui.master, 'GET', `/executions/${id}`);
    expect(run).toMatchObject({ status: 'cancelled', cancelled_by: 'admin' });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('shows a bad workflow the API refuses with its message', async () => {
    const { page } = await open(ui.admin, '/executions?new=1');
    const form = page.getByRole('form', { name: 'New run' });
    await form.getByLabel('Workflow', { exact: true }).fill('version: "1.0"\ntasks:\n  - nme: typo\n');
    await form.getByRole('button', { name: 'Start' }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    expect((await alert.textContent())?.length).toBeGreaterThan(10);
    await page.context().close();
  });

  it('lets an ui.admin add a user and create an API token, shown once, that works', async () => {
    const { page, problems } = await open(ui.admin, '/settings?tab=users');
    const users = page.getByRole('form', { name: 'Add a user' });
    await users.getByLabel('User name').fill('otto');
    await users.getByLabel('Role').selectOption('operator');
    await users.getByRole('button', { name: 'Add user' }).click();
    const shown = page.getByText(/Password of otto, shown this once/);
    await shown.waitFor();
    const password = (await shown.locator('code').textContent())!;
    const otto = await fetch(`${ui.master.origin}/api/v1/auth/me`, {
      headers: { authorization: `Basic ${Buffer.from(`otto:${password}`).toString('base64')}` },
    });
    expect(await otto.json()).toMatchObject({ name: 'otto', role: 'operator' });

    await page.getByRole('tab', { name: 'API tokens' }).click();
    const tokens = page.getByRole('form', { name: 'Create an API token' });
    await tokens.getByLabel('Name').fill('ci-deploy');
    await tokens.getByRole('button', { name: 'Create token' }).click();
    const token = (await page.locator('code.token').textContent())!;
    const ci = await fetch(`${ui.master.origin}/api/v1/agents`, { headers: { authorization: `Bearer ${token}` } });
    expect(ci.status).toBe(200);
    await page.getByRole('button', { name: 'Revoke ci-deploy' }).click();
    // The kit's confirm dialog asks first.
    await page
      .getByRole('dialog', { name: 'Revoke the token ci-deploy?' })
      .getByRole('button', { name: 'Revoke ci-deploy' })
      .click();
    await page.getByText('No API token yet.').waitFor();
    const revoked = await fetch(`${ui.master.origin}/api/v1/agents`, { headers: { authorization: `Bearer ${token}` } });
    expect(revoked.status).toBe(401);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('asks no login of a ui.master whose authentication is off, and shows everything', async () => {
    const open = await fleet.master({ RUNNER_AUTH_ENABLED: 'false' });
    const ctx = await context(ui.browser, { origin: open.origin });
    const page = await ctx.newPage();
    const { problems } = watch(page);
    await page.goto('/agent-control');
    await page.getByRole('heading', { name: 'Agent control', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/agent-control');
    expect(await page.getByRole('button', { name: 'Log out' }).count()).toBe(0);
    const links = await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
    expect(links.map((l) => l.trim())).toEqual([
      'Dashboard',
      'Agents',
      'Agent control',
      'Executions',
      'Flows',
      'Scheduler',
      'Hooks',
      'Events',
      'Stacks',
      'Secrets',
      'GitOps',
      'SSH profiles',
      'Terminal',
      'Logs',
      'Settings',
    ]);
    // No agent and no run yet, so no stored event: the dashboard says what will appear there.
    await page.goto('/');
    const events = page.getByRole('region', { name: 'Latest events' });
    await events.getByText('No event is stored yet.', { exact: false }).waitFor();
    expect(await looks(page, 'dashboard-events-empty', { show: events })).toEqual([]);
    expect(problems).toEqual([]);
    await ctx.close();
  });

  it("streams an agent's own log in its Logs tab: recent lines, then a new one", async () => {
    const { page, problems } = await open(ui.admin, '/agents?agent=web-1');
    await page.getByRole('tab', { name: 'Logs' }).click();
    const log = page.getByRole('log', { name: 'Log of web-1' });
    await log
      .getByText(/registered with master/)
      .first()
      .waitFor();
    await page.getByRole('status').getByText('Streaming').waitFor();
    // A line the agent logs from now on arrives on the open stream, with no reload.
    await apiCall(ui.master, 'POST', '/agents/web-1/exec', { command: 'true # marker-5120' });
    await log.getByText('running a command for the master: true # marker-5120').waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('hides Execute, Restart and agent control from a Viewer', async () => {
    await apiCall(ui.master, 'POST', '/users', { name: 'vera', role: 'viewer', password: 'viewer-password-1' });
    const viewer = await logIn(ui.browser, ui.master.origin, 'vera', 'viewer-password-1');
    const { page, problems } = await open(viewer, '/agents');
    await page.getByRole('heading', { name: 'web-1' }).waitFor();
    expect(await page.getByRole('button', { name: /^Restart/ }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Remove/ }).count()).toBe(0);
    const nav = page.getByRole('navigation', { name: 'Main' });
    expect(await nav.getByRole('link').allTextContents()).not.toContain('Agent control');
    await page.getByRole('button', { name: 'Details of web-1' }).click();
    await page.getByRole('tab', { name: 'Overview' }).waitFor();
    expect(await page.getByRole('tab').allTextContents()).not.toContain('Execute');
    await page.getByText('viewer', { exact: true }).waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
