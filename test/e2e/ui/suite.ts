// The set-up every UI test file shares: a real master (and agents), Debian's chromium, the admin
// logged in (the login API, as the login page calls it); all stopped after the file. `uiSuite()` registers the
// beforeAll/afterAll hooks itself; a file's own beforeAll hooks run after it, with the suite ready.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { context, launch, logIn, VIEWPORTS, watch, type Session, type Theme } from './browser.js';
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
   * A page (its theme and size) on `path`, as the admin unless another `session` is given
   * (`null`: no session, a visitor), with what went wrong on the page collected from there on.
   * The page is a browser context of its own, as a new visitor's, but for its HTTP cache: closing
   * that context (`page.context().close()`) hands the page back, and a later `open` with the same
   * session, theme and size navigates it instead of starting another (see `PagePool`).
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
  const pool = new PagePool();

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
    async open(path, { session, theme = 'light', viewport = 'desktop' } = {}) {
      const { master, browser, admin } = get();
      const who = session === null ? undefined : (session ?? admin);
      const page = await pool.page({ browser, origin: master.origin, session: who, theme, viewport });
      const { problems } = watch(page);
      await page.goto(path);
      return { page, problems };
    },
  };
}

/** The page events a test listens to (`watch`, dialogs, requests, downloads): dropped on hand-back. */
const TEST_EVENTS = ['console', 'pageerror', 'requestfailed', 'response', 'request', 'dialog', 'download'] as const;

/**
 * Pages handed back by the tests, kept for the next `open` of the same session, theme and size.
 * Chromium starts a renderer process for every new context's first page (~1.8 s of CPU here, two
 * thirds of what opening a page cost); a page navigated to another address keeps its process and
 * its cached scripts (~0.6 s). What a test leaves behind does not reach the next one: its
 * listeners are removed, its window size is put back, the page's local and session storage are
 * emptied (the theme comes back with the context's init script at the next load), and the next
 * `open` loads a new document. The session's cookie is shared, as two tabs of one user share it.
 */
class PagePool {
  private readonly idle = new Map<string, Page[]>();
  private readonly sessionIds = new WeakMap<Session, number>();
  private sessions = 0;

  async page(options: {
    browser: Browser;
    origin: string;
    session: Session | undefined;
    theme: Theme;
    viewport: keyof typeof VIEWPORTS;
  }): Promise<Page> {
    const key = `${this.sessionKey(options.session)} ${options.theme} ${options.viewport}`;
    const kept = this.idle.get(key)?.pop();
    if (kept && !kept.isClosed()) return kept;
    const ctx = await context(options.browser, options);
    const page = await ctx.newPage();
    this.handBackOnClose(ctx, page, key, options.viewport);
    return page;
  }

  /** `close()` on the context hands the page back instead (the run's end closes every context). */
  private handBackOnClose(ctx: BrowserContext, page: Page, key: string, viewport: keyof typeof VIEWPORTS): void {
    ctx.close = async () => {
      for (const event of TEST_EVENTS) page.removeAllListeners(event);
      if (page.isClosed()) return;
      const size = VIEWPORTS[viewport];
      const now = page.viewportSize();
      if (now?.width !== size.width || now.height !== size.height) await page.setViewportSize(size);
      await page.evaluate('localStorage.clear(); sessionStorage.clear()').catch(() => undefined);
      const list = this.idle.get(key) ?? [];
      // A second close of the same context hands nothing back twice.
      if (!list.includes(page)) list.push(page);
      this.idle.set(key, list);
    };
  }

  private sessionKey(session: Session | undefined): string {
    if (!session) return 'visitor';
    let id = this.sessionIds.get(session);
    if (id === undefined) this.sessionIds.set(session, (id = ++this.sessions));
    return `session-${id}`;
  }
}
