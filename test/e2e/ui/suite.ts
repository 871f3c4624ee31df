// The set-up every UI test file shares: a real master (and agents), Debian's chromium, the admin
// logged in (the login API, as the login page calls it); all stopped after the file. `uiSuite()` registers the
// beforeAll/afterAll hooks itself; a file's own beforeAll hooks run after it, with the suite ready.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { context, launch, logIn, watch, type Session, type Theme, type VIEWPORTS } from './browser.js';
import { Fleet, type Child, type Master } from './fleet.js';

export interface UiSuiteOptions {
  /** Agents started and registered with the master before the admin logs in. */
  agents?: string[];
  /** Extra environment of the master. */
  env?: Record<string, string>;
  /** The set-up's time limit (a master, agents, chromium and a login on a shared machine). */
  timeoutMs?: number;
}

export interface UiSuite {
  readonly fleet: Fleet;
  readonly master: Master;
  readonly browser: Browser;
  /** The admin's session, from logging in through the login page. */
  readonly admin: Session;
  /** The agents' processes by name. */
  readonly agents: Readonly<Record<string, Child>>;
  /**
   * A new browser context (its theme and size) on `path`, as the admin unless another `session`
   * is given (`null`: no session, a visitor), with what went wrong on the page collected.
   */
  open(
    path: string,
    options?: { session?: Session | null; theme?: Theme; viewport?: keyof typeof VIEWPORTS },
  ): Promise<{ page: Page; problems: string[] }>;
}

export function uiSuite(options: UiSuiteOptions = {}): UiSuite {
  const fleet = new Fleet();
  let ready: { master: Master; browser: Browser; admin: Session; agents: Record<string, Child> } | undefined;
  const get = () => {
    if (!ready) throw new Error('the UI suite is used before its beforeAll ran (or its set-up failed)');
    return ready;
  };
  let browser: Browser | undefined;

  beforeAll(async () => {
    // Chromium starts while the master and its agents do: neither needs the other until the login.
    const launched = launch().then((b) => (browser = b));
    // Should the master fail first, its error is the one reported, not this one as well.
    launched.catch(() => undefined);
    const master = await fleet.master(options.env);
    const names = options.agents ?? [];
    const children = await Promise.all(names.map((name) => fleet.agent(master, name)));
    const started = await launched;
    const admin = await logIn(started, master.origin, 'admin', master.adminPassword);
    ready = {
      master,
      browser: started,
      admin,
      agents: Object.fromEntries(names.map((n, i) => [n, children[i] as Child])),
    };
  }, options.timeoutMs ?? 90_000);

  afterAll(async () => {
    await browser?.close();
    await fleet.stop();
  });

  return {
    fleet,
    get master() {
      return get().master;
    },
    get browser() {
      return get().browser;
    },
    get admin() {
      return get().admin;
    },
    get agents() {
      return get().agents;
    },
    async open(path, { session, theme, viewport } = {}) {
      const { master, browser, admin } = get();
      const ctx = await context(browser, {
        origin: master.origin,
        session: session === null ? undefined : (session ?? admin),
        theme,
        viewport,
      });
      const page = await ctx.newPage();
      const { problems } = watch(page);
      await page.goto(path);
      return { page, problems };
    },
  };
}
