// Stacks and secrets in the web UI, in Debian's chromium against a real master: /stacks lists the
// stacks with their Active/Inactive badge; a production stack's page shows its variables and its
// secret names (never a value) and asks before running a flow on it; /secrets lists names per stack
// with the flows using them, adds one through its form and removes one. Each page in the suite's
// looks (light desktop and dark phone; all four with UI_TEST_LOOKS=all), axe-scanned in each
// (ui/screenshots/stacks-*, secrets-*).
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { looks } from './browser.js';
import { apiCall } from './fleet.js';
import { uiSuite } from './suite.js';

const ui = uiSuite();
const VALUE = `ui-${randomBytes(8).toString('hex')}`;
const FLOW = `version: "1.0"
tasks:
  - name: hello
    exec:
      script: |
        log.info("region " .. stack.vars.region .. " key " .. secrets.api_key)
        return true
`;

beforeAll(async () => {
  await apiCall(ui.master, 'POST', '/stacks', {
    name: 'prod',
    environment: 'production',
    description: 'the live site',
    variables: { region: 'eu-1', replicas: '3' },
  });
  await apiCall(ui.master, 'POST', '/stacks', { name: 'old', environment: 'staging', active: false });
  await apiCall(ui.master, 'PUT', '/secrets/prod/api_key', { value: VALUE });
  await apiCall(ui.master, 'POST', '/flows', { name: 'hello', yaml: FLOW });
}, 30_000);

describe('stacks and secrets pages', () => {
  it('/stacks lists each stack with its badge, counts and environment', async () => {
    const { page, problems } = await ui.open('/stacks');
    const prod = page.getByRole('row').filter({ hasText: 'prod' });
    await prod.waitFor();
    expect(await prod.textContent()).toMatch(/production.*active/);
    expect(await page.getByRole('row').filter({ hasText: 'old' }).textContent()).toContain('inactive');
    expect(await looks(page, 'stacks-list')).toEqual([]);
    expect(problems).toEqual([]);
  });

  it("a production stack's page shows variables and secret names, and asks before a run", async () => {
    const { page, problems } = await ui.open('/stacks/prod');
    await page.getByRole('heading', { name: 'prod' }).waitFor();
    await page.getByText('eu-1').waitFor();
    await page.getByText('api_key').waitFor();
    expect(await page.content()).not.toContain(VALUE);
    await page.getByLabel('Flow').fill('hello');
    await page.getByRole('button', { name: 'Run on prod' }).click();
    const dialog = page.getByRole('dialog', { name: 'Run on a production stack' });
    await dialog.waitFor();
    expect(await looks(page, 'stacks-detail')).toEqual([]);
    await dialog.getByRole('button', { name: 'Run hello on prod' }).click();
    await page.getByRole('status').filter({ hasText: 'Started:' }).waitFor();
    const { executions } = await apiCall<{ executions: { stack?: string }[] }>(
      ui.master,
      'GET',
      '/executions?stack=prod',
    );
    expect(executions[0]?.stack).toBe('prod');
    expect(problems).toEqual([]);
  });

  it('/secrets shows names per stack and the flows using them, adds and removes, never a value', async () => {
    const { page, problems } = await ui.open('/secrets');
    const row = page.getByRole('row').filter({ hasText: 'api_key' });
    await row.waitFor();
    expect(await row.textContent()).toContain('hello');
    await page.getByLabel('Stack').selectOption('prod');
    await page.getByLabel('Name').fill('db_password');
    await page.getByLabel('Value').fill(`${VALUE}-2`);
    await page.getByRole('button', { name: 'Add secret' }).click();
    await page.getByRole('row').filter({ hasText: 'db_password' }).waitFor();
    expect(await page.getByLabel('Value').inputValue()).toBe('');
    expect(await looks(page, 'secrets')).toEqual([]);
    expect(await page.content()).not.toContain(VALUE);
    await page.getByRole('button', { name: 'Remove db_password of prod' }).click();
    await page
      .getByRole('dialog', { name: 'Remove a secret' })
      .getByRole('button', { name: 'Remove db_password' })
      .click();
    await page.getByRole('row').filter({ hasText: 'db_password' }).waitFor({ state: 'detached' });
    const { secrets } = await apiCall<{ secrets: { name: string }[] }>(ui.master, 'GET', '/secrets/prod');
    expect(secrets.map((s) => s.name)).toEqual(['api_key']);
    expect(problems).toEqual([]);
  });
});
