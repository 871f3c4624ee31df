// The /gitops page in Debian's chromium against a real master whose GitOps repository is a real
// bare git repository on this machine (file://): the admin syncs it through the page's
// confirmation, a push shows up as a diff, a flow edited outside git as drift. One screenshot
// (light, desktop) goes to ui/screenshots/gitops-light-desktop.png.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { screenshot, seriousViolations } from './browser.js';
import { apiCall } from './fleet.js';
import { uiSuite } from './suite.js';

const root = mkdtempSync(join(tmpdir(), 'runner-ui-gitops-'));
const bare = join(root, 'ops.git');
const work = join(root, 'work');
const env = {
  ...process.env,
  HOME: root,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'Ada',
  GIT_AUTHOR_EMAIL: 'ada@example.org',
  GIT_COMMITTER_NAME: 'Ada',
  GIT_COMMITTER_EMAIL: 'ada@example.org',
};
const git = (...args: string[]) => execFileSync('git', args, { cwd: work, env, encoding: 'utf8' }).trim();
const flow = (task: string) => `version: "1.0"\ntasks:\n  - name: ${task}\n    exec:\n      script: return true\n`;

function push(files: Record<string, string>, message: string): string {
  for (const [path, text] of Object.entries(files)) writeFileSync(join(work, path), text);
  git('add', '-A');
  git('commit', '--quiet', '-m', message);
  git('push', '--quiet', 'origin', 'HEAD:main');
  return git('rev-parse', 'HEAD');
}

// The repository exists before the master starts (its config names it).
execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', bare], { env });
mkdirSync(join(work, 'flows'), { recursive: true });
git('init', '--quiet', '--initial-branch=main');
git('remote', 'add', 'origin', bare);
push({ 'flows/deploy.yaml': flow('ship'), 'flows/backup.yaml': flow('copy') }, 'deploy and backup');

const ui = uiSuite({ env: { RUNNER_GITOPS_URL: `file://${bare}`, RUNNER_GITOPS_PATH: 'flows' } });

describe('/gitops', () => {
  it('syncs after a confirmation, then shows a push as a diff and a UI edit as drift', async () => {
    const { page, problems } = await ui.open('/gitops');
    await page.getByText('nothing yet').waitFor();
    await page.getByRole('button', { name: 'Sync now' }).click();
    const dialog = page.getByRole('dialog', { name: 'Sync from main?' });
    await dialog.getByRole('button', { name: 'Sync' }).click();
    await page.getByRole('status').filter({ hasText: 'Synced' }).waitFor();
    expect(await page.getByRole('status').filter({ hasText: 'Synced' }).textContent()).toContain('2 flows');

    // Edited outside git (by the local token apiCall sends): drift names the flow and who changed it.
    const current = await apiCall<{ yaml: string }>(ui.master, 'GET', '/flows/backup');
    await apiCall(ui.master, 'PUT', '/flows/backup', { yaml: current.yaml.replace('copy', 'copy-all') });
    const head = push({ 'flows/deploy.yaml': flow('ship-it') }, 'rename the deploy task');
    await page.reload();
    const drift = page.getByRole('table', { name: 'Drift' });
    await drift.getByRole('link', { name: 'backup' }).waitFor();
    expect(await drift.getByRole('row').nth(1).textContent()).toContain('v2 local');

    await page.getByRole('button', { name: 'Show diff' }).click();
    const changes = page.getByRole('region', { name: 'What a sync would change' });
    await changes.waitFor();
    expect(await changes.getByRole('heading', { level: 2 }).textContent()).toContain(head.slice(0, 12));
    expect(await changes.getByLabel('Diff of flow deploy').textContent()).toContain('+  - name: ship-it');
    expect(await changes.getByLabel('Diff of flow backup').textContent()).toContain('+  - name: copy');
    await screenshot(page, 'gitops-light-desktop');
    expect(await seriousViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
  });
});
