// OpenID Connect login end to end: a real provider (oidc-provider from npm, its development login
// pages) on a loopback port, a real `runner server` configured with it, the browser's redirects
// followed by hand with a cookie jar per site.
import { writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnRunner, stopAll, tempDataDir, waitForOutput } from './helpers.js';
import { context, launch, looks, watch } from './ui/browser.js';

const groups: Record<string, string[]> = { olga: ['ops', 'staff'], dave: ['devs'], nora: ['visitors'] };
let issuerServer: Server;
let runner: string;
const children: ReturnType<typeof spawnRunner>[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  const [issuerPort, httpPort] = [await freePort(), await freePort()];
  const issuer = `http://127.0.0.1:${issuerPort}`;
  runner = `http://127.0.0.1:${httpPort}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'runner',
        client_secret: 'runner-client-secret-for-tests',
        redirect_uris: [`${runner}/api/v1/auth/oidc/corp/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    claims: { openid: ['sub'], profile: ['preferred_username'], groups: ['groups'] },
    findAccount: (_ctx, id) => ({
      accountId: id,
      claims: () => ({ sub: id, preferred_username: id, groups: groups[id] ?? [] }),
    }),
    cookies: { keys: ['oidc-test-cookie-key'] },
  });
  issuerServer = provider.listen(issuerPort);
  const dataDir = tempDataDir('runner-auth-oidc-');
  writeFileSync(
    join(dataDir, 'config.yaml'),
    [
      'auth:',
      '  oauth:',
      '    providers:',
      '      - name: corp',
      '        display_name: Corp SSO',
      `        issuer: ${issuer}`,
      '        client_id: runner',
      '        client_secret: runner-client-secret-for-tests',
      '        scope: openid profile groups',
      '        role_claim: groups',
      '        role_mapping: { ops: operator, devs: developer }',
      '',
    ].join('\n'),
  );
  const child = spawnRunner(['server', '--http-port', String(httpPort), '--port', '0'], {
    env: { RUNNER_DATA_DIR: dataDir },
  });
  children.push(child);
  await waitForOutput(child, /REST API listening on/);
}, 30_000);

afterAll(async () => {
  stopAll(children, 'SIGTERM');
  await new Promise((resolve) => issuerServer?.close(resolve));
});

/** Cookies a browser keeps for one site (name to value; paths are not needed here). */
class Jar {
  private readonly cookies = new Map<string, string>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
  }
  get(name: string): string | undefined {
    return this.cookies.get(name);
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/** What a browser does from "log in with corp" until it is back on the master, as `user`. */
async function browserLogin(
  user: string,
): Promise<{ status: number; location: string | null; jar: Jar; body: string }> {
  const runnerJar = new Jar();
  const providerJar = new Jar();
  const start = await fetch(`${runner}/api/v1/auth/oidc/corp/login`, { redirect: 'manual' });
  expect(start.status).toBe(302);
  runnerJar.take(start);
  let url = new URL(start.headers.get('location')!);
  expect(url.searchParams.get('code_challenge_method')).toBe('S256');
  let interactions = 0;
  for (let hop = 0; !url.href.startsWith(runner); hop++) {
    if (hop > 20) throw new Error(`too many redirects at ${url.href}`);
    const interaction = url.pathname.startsWith('/interaction/');
    const response = await fetch(url, {
      method: interaction ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: providerJar.header(),
        ...(interaction ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      // The provider's development pages: first the login form, then the consent form.
      body: interaction
        ? interactions++ === 0
          ? `prompt=login&login=${user}&password=any`
          : 'prompt=consent'
        : undefined,
    });
    providerJar.take(response);
    const location = response.headers.get('location');
    if (!location) throw new Error(`${response.status} from ${url.href} without a redirect: ${await response.text()}`);
    url = new URL(location, url);
  }
  const back = await fetch(url, { redirect: 'manual', headers: { cookie: runnerJar.header() } });
  runnerJar.take(back);
  return { status: back.status, location: back.headers.get('location'), jar: runnerJar, body: await back.text() };
}

describe('OpenID Connect login against oidc-provider', () => {
  it('comes back logged in with the role its groups map to, in the session cookie', async () => {
    const olga = await browserLogin('olga');
    expect(olga.status, olga.body).toBe(302);
    expect(olga.location).toBe('/');
    const session = olga.jar.get('runner_session');
    expect(session).toBeDefined();
    const me = await fetch(`${runner}/api/v1/auth/me`, { headers: { cookie: `runner_session=${session}` } });
    expect(await me.json()).toMatchObject({ name: 'olga', role: 'operator', method: 'jwt' });
    expect((await browserLogin('dave')).status).toBe(302);
  });

  it('refuses a user whose groups map to no role, and a callback this browser did not start', async () => {
    const nora = await browserLogin('nora');
    expect(nora.status).toBe(403);
    expect(JSON.parse(nora.body).error.message).toContain('role_mapping');
    const forged = await fetch(`${runner}/api/v1/auth/oidc/corp/callback?code=stolen&state=guessed`, {
      redirect: 'manual',
    });
    expect(forged.status).toBe(403);
  });
});

describe('the login page with a provider configured', () => {
  it('lists the provider publicly: its name and display name, never its secret', async () => {
    const response = await fetch(`${runner}/api/v1/auth/providers`);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      providers: [{ name: 'corp', display_name: 'Corp SSO', login_url: '/api/v1/auth/oidc/corp/login' }],
    });
    expect(text).not.toContain('runner-client-secret-for-tests');
  });

  it('signs in with the provider from its button in chromium and lands logged in', async () => {
    const browser = await launch();
    try {
      const page = await (await context(browser, { origin: runner })).newPage();
      await page.goto('/agents');
      await page.waitForURL((url) => url.pathname === '/login');
      await page.getByRole('link', { name: 'Sign in with Corp SSO' }).click();
      // oidc-provider's development pages: a login form, then a consent form.
      await page.waitForURL((url) => !url.href.startsWith(runner));
      await page.locator('input[name=login]').fill('olga');
      await page.locator('input[name=password]').fill('any');
      await page.locator('button[type=submit]').click();
      await page.locator('button[type=submit]').click();
      await page.waitForURL((url) => url.href.startsWith(runner) && url.pathname === '/');
      await page.getByRole('button', { name: 'Log out' }).waitFor();
      expect(await page.getByText('olga').first().isVisible()).toBe(true);
      await page.context().close();
    } finally {
      await browser.close();
    }
  }, 60_000);

  it('shows the button legibly, light and dark, at both sizes', async () => {
    const browser = await launch();
    try {
      const page = await (await context(browser, { origin: runner })).newPage();
      const { problems } = watch(page);
      await page.goto('/login');
      await page.getByRole('link', { name: 'Sign in with Corp SSO' }).waitFor();
      expect(await looks(page, 'login-oidc')).toEqual([]);
      // The page asks who is logged in first: that 401 is how it knows to show the form.
      expect(problems.filter((p) => !p.includes('/api/v1/auth/me'))).toEqual([]);
      await page.context().close();
    } finally {
      await browser.close();
    }
  }, 60_000);
});
