// The window's security settings: what the renderer may run, where it may go, what it may open.
// The renderer shows pages from a master (embedded, or a remote one the user chose), so it is
// treated as a web page: no Node, a sandbox, an isolated preload world, and one origin.
import type { ResponseHeaders, WebContentsFacade, WindowOptions } from './facade.js';

/** The options of the one window. The preload is the only code with access to IPC. */
export function windowOptions(preloadPath: string): WindowOptions {
  return {
    width: 1280,
    height: 800,
    minWidth: 390,
    minHeight: 500,
    title: 'runner',
    // Shown on ready-to-show, so the user never sees an empty white frame.
    show: false,
    backgroundColor: '#1b1d23',
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webviewTag: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      spellcheck: false,
    },
  };
}

export type NavigationDecision = 'allow' | 'external' | 'deny';

/**
 * Where a navigation may go: within the master's origin it stays in the window; another http(s)
 * page opens in the user's browser; anything else (file:, javascript:, data:, custom schemes) is
 * refused, since a page that could move the window there could read local files or run code
 * with the bridge at hand.
 */
export function decideNavigation(url: string, allowedOrigin: string | undefined): NavigationDecision {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return 'deny';
  }
  if (allowedOrigin !== undefined && target.origin === allowedOrigin) return 'allow';
  if (target.protocol === 'http:' || target.protocol === 'https:') return 'external';
  return 'deny';
}

/**
 * Locks the window to the master's origin (asked at each navigation: switching connections
 * changes it). Navigations elsewhere are cancelled; http(s) ones open in the browser instead.
 * New windows are always refused, and the same rule sends their http(s) URL to the browser.
 */
export function lockNavigation(
  webContents: WebContentsFacade,
  allowedOrigin: () => string | undefined,
  openExternal: (url: string) => Promise<void>,
  log: (message: string) => void,
): void {
  const sendAway = (url: string): void => {
    openExternal(url).catch((error: Error) => log(`could not open ${url} in the browser: ${error.message}`));
  };
  webContents.onNavigate((event, url) => {
    const decision = decideNavigation(url, allowedOrigin());
    if (decision === 'allow') return;
    event.preventDefault();
    if (decision === 'external') sendAway(url);
    else log(`refused navigation to ${url}: only ${allowedOrigin() ?? 'the master'} and http(s) links are allowed`);
  });
  webContents.setWindowOpenHandler(({ url }) => {
    const decision = decideNavigation(url, allowedOrigin());
    // Even a same-origin window.open opens no second window: the UI is one window.
    if (decision !== 'deny') sendAway(url);
    return { action: 'deny' };
  });
}

/**
 * The policy the shell adds to the master's pages. It bounds what any page may do (no remote
 * scripts, no plugins, no framing, no eval); the UI's own policy (SvelteKit writes one with
 * script hashes into its pages) tightens it further, since a browser enforces every policy it
 * is given. 'unsafe-inline' for scripts is here only so that this outer bound does not block the
 * hashed inline start-up script that the UI's policy allows.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Adds the shell's policy to responses from the master's origin; other responses pass as they are. */
export function withContentSecurityPolicy(
  url: string,
  headers: ResponseHeaders,
  masterOrigin: string | undefined,
): ResponseHeaders {
  let origin: string;
  try {
    origin = new URL(url).origin;
  } catch {
    return headers;
  }
  if (origin !== masterOrigin) return headers;
  const existing = Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-security-policy');
  const policies = existing ? [...existing[1], CONTENT_SECURITY_POLICY] : [CONTENT_SECURITY_POLICY];
  const rest = Object.fromEntries(
    Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'content-security-policy'),
  );
  return { ...rest, 'Content-Security-Policy': policies };
}

/** Permissions the UI may get: writing to the clipboard (copy buttons). Everything else is refused. */
export function permissionAllowed(
  permission: string,
  requestingUrl: string,
  masterOrigin: string | undefined,
): boolean {
  if (permission !== 'clipboard-sanitized-write') return false;
  try {
    return new URL(requestingUrl).origin === masterOrigin;
  } catch {
    return false;
  }
}
