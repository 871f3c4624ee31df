// The terminal and SSH profile pages in Debian's chromium against a real master and a real agent:
// an admin opens a terminal tab on the agent, types a command and reads its output, resizes the
// window (the shell sees the new size), uploads a file and downloads it back (checksums equal); a
// Viewer is offered no terminal and cannot open one. Each page in the suite's looks, axe-scanned.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { logIn, looks } from './browser.js';
import { apiCall } from './fleet.js';
import { uiSuite } from './suite.js';

const AGENT = 'shell-1';
const ui = uiSuite({ agents: [AGENT] });
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** What the visible terminal shows (xterm's DOM rows). */
const screen = (page: Page) => page.locator('[data-status]:visible .xterm-rows').innerText();

async function shows(page: Page, text: string | RegExp): Promise<string> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const shown = await screen(page);
    if (typeof text === 'string' ? shown.includes(text) : text.test(shown)) return shown;
    if (Date.now() > deadline) throw new Error(`the terminal never showed ${text}; it shows:\n${shown}`);
    await page.waitForTimeout(100);
  }
}

/** Types a command line into the terminal that has the focus. */
async function run(page: Page, line: string): Promise<void> {
  await page.keyboard.type(line);
  await page.keyboard.press('Enter');
}

/** The size `stty size` printed last (after `marker`). */
async function sttySize(page: Page, marker: string): Promise<[number, number]> {
  await run(page, `echo ${marker}-$(stty size | tr ' ' x)`);
  const shown = await shows(page, new RegExp(`${marker}-\\d+x\\d+`));
  const [, rows, cols] = new RegExp(`${marker}-(\\d+)x(\\d+)`).exec(shown) as RegExpExecArray;
  return [Number(rows), Number(cols)];
}

describe('the terminal page', () => {
  it('types into a tab on the real agent, resizes, uploads and downloads a file', async () => {
    const { page, problems } = await ui.open('/terminal');
    await page.getByLabel('Target').selectOption(AGENT);
    await page.getByRole('button', { name: 'Open terminal' }).click();
    await page.locator('[data-status="open"]').waitFor();
    await page.locator('.xterm-helper-textarea').focus();
    await run(page, 'echo hel""lo-$((6*7))');
    await shows(page, 'hello-42');
    expect(await page.getByRole('tab', { name: `1: ${AGENT}` }).getAttribute('aria-selected')).toBe('true');

    const before = await sttySize(page, 'size1');
    await page.setViewportSize({ width: 900, height: 600 });
    await page.waitForTimeout(300);
    const after = await sttySize(page, 'size2');
    expect(after[1]).toBeLessThan(before[1]);

    const data = randomBytes(50_000);
    const name = `up-${randomBytes(3).toString('hex')}.bin`;
    await page.getByLabel('File to upload').setInputFiles({ name, mimeType: 'application/octet-stream', buffer: data });
    await page
      .getByRole('status')
      .filter({ hasText: `Uploaded ${data.length} bytes to /tmp/${name}` })
      .waitFor();
    await page.locator('.xterm-helper-textarea').focus();
    await run(page, `sha256sum /tmp/${name}`);
    await shows(page, sha256(data));

    await page.getByLabel('Download path').fill(`/tmp/${name}`);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download' }).click(),
    ]);
    // The browser is remote (the chromium broker): the download is saved here to be read.
    const saved = join(mkdtempSync(join(tmpdir(), 'runner-ui-download-')), name);
    await download.saveAs(saved);
    expect(sha256(readFileSync(saved))).toBe(sha256(data));

    await page.evaluate('window.scrollTo(0, 0)');
    expect(await looks(page, 'terminal')).toEqual([]);

    // A reload reattaches to the live session, with what it printed.
    await page.reload();
    await page.locator('[data-status="open"]').waitFor();
    await shows(page, 'hello-42');
    await page.locator('.xterm-helper-textarea').focus();
    await run(page, `rm /tmp/${name}; exit`);
    await page.getByText('ended (exit 0)').waitFor();
    expect(problems).toEqual([]);
  }, 120_000);

  it('offers a Viewer no terminal, and refuses to open one', async () => {
    await apiCall(ui.master, 'POST', '/users', { name: 'viv', role: 'viewer', password: 'viewer-password-7' });
    const viewer = await logIn(ui.browser, ui.master.origin, 'viv', 'viewer-password-7');
    const { page } = await ui.open('/ssh', { session: viewer });
    await page.getByRole('heading', { name: 'SSH profiles', exact: true }).waitFor();
    expect(
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Terminal', exact: true }).count(),
    ).toBe(0);
    expect(
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'SSH profiles', exact: true })
        .count(),
    ).toBe(1);
    const { token } = await apiCall<{ token: string }>(ui.master, 'POST', '/auth/login', {
      username: 'viv',
      password: 'viewer-password-7',
    });
    const refused = await fetch(`${ui.master.origin}/api/v1/terminal/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ target: AGENT }),
    });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('terminal:open');
  });

  it('lists SSH profiles and shows one with its audit log', async () => {
    await apiCall(ui.master, 'POST', '/ssh', {
      name: 'build-box',
      host: '127.0.0.1',
      port: 1,
      user: 'deploy',
      auth_type: 'key',
      key_path: '/nonexistent/id_ed25519',
      description: 'the build host',
    });
    const { page, problems } = await ui.open('/ssh');
    await page.getByRole('link', { name: 'build-box' }).waitFor();
    expect(await looks(page, 'ssh')).toEqual([]);
    await page.getByRole('link', { name: 'build-box' }).click();
    await page.getByRole('heading', { name: 'build-box' }).waitFor();
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.getByRole('alert').filter({ hasText: 'cannot read its key' }).waitFor();
    // The test's refusal (400: the key file does not exist) is the one failed request expected.
    expect(problems.filter((p) => !p.includes('/test') && !p.includes('status of 400'))).toEqual([]);
  });
});
