import { describe, expect, it } from 'vitest';
import { fakeElectron } from './fake-electron.js';
import {
  CONTENT_SECURITY_POLICY,
  decideNavigation,
  lockNavigation,
  permissionAllowed,
  windowOptions,
  withContentSecurityPolicy,
} from './window.js';

const MASTER = 'http://127.0.0.1:41234';

describe('window options', () => {
  it('isolate the page: no Node, a sandbox, no webview, the preload given', () => {
    const { webPreferences } = windowOptions('/app/dist/preload.cjs');
    expect(webPreferences).toMatchObject({
      preload: '/app/dist/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webviewTag: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
    });
  });
});

describe('navigation lock', () => {
  it('keeps the master origin, sends http(s) elsewhere to the browser, refuses the rest', () => {
    expect(decideNavigation(`${MASTER}/executions?run=7`, MASTER)).toBe('allow');
    expect(decideNavigation('http://127.0.0.1:41235/', MASTER)).toBe('external');
    expect(decideNavigation('https://example.org/docs', MASTER)).toBe('external');
    for (const url of ['file:///etc/passwd', 'javascript:alert(1)', 'data:text/html,hi', 'runner://x', 'not a url']) {
      expect(decideNavigation(url, MASTER)).toBe('deny');
    }
    // No master loaded yet: nothing is inside.
    expect(decideNavigation(`${MASTER}/`, undefined)).toBe('external');
  });

  it('cancels navigations away from the master, follows the current origin, and denies every new window', () => {
    const electron = fakeElectron('/nowhere');
    const window = electron.createWindow(windowOptions('/p.cjs'));
    let origin = MASTER;
    const logged: string[] = [];
    lockNavigation(
      window.webContents,
      () => origin,
      electron.shell.openExternal,
      (m) => logged.push(m),
    );

    expect(window.navigate(`${MASTER}/agents`)).toBe(true);
    expect(window.navigate('https://example.org/')).toBe(false);
    expect(window.navigate('file:///etc/passwd')).toBe(false);
    expect(electron.openedExternally).toEqual(['https://example.org/']);
    expect(logged.join('\n')).toContain('refused navigation to file:///etc/passwd');

    origin = 'https://remote.example:8443';
    expect(window.navigate(`${MASTER}/agents`)).toBe(false);
    expect(window.navigate('https://remote.example:8443/logs')).toBe(true);

    expect(window.open('https://example.org/help')).toEqual({ action: 'deny' });
    expect(window.open('https://remote.example:8443/popup')).toEqual({ action: 'deny' });
    expect(window.open('file:///etc/passwd')).toEqual({ action: 'deny' });
    expect(electron.openedExternally).toEqual([
      'https://example.org/',
      `${MASTER}/agents`,
      'https://example.org/help',
      'https://remote.example:8443/popup',
    ]);
  });
});

describe('content security policy', () => {
  it("is added to the master's responses beside the page's own policy", () => {
    const headers = withContentSecurityPolicy(`${MASTER}/`, { 'content-type': ['text/html'] }, MASTER);
    expect(headers['Content-Security-Policy']).toEqual([CONTENT_SECURITY_POLICY]);
    const both = withContentSecurityPolicy(
      `${MASTER}/`,
      { 'content-security-policy': ["script-src 'self' 'sha256-abc'"] },
      MASTER,
    );
    expect(both['Content-Security-Policy']).toEqual(["script-src 'self' 'sha256-abc'", CONTENT_SECURITY_POLICY]);
    expect(Object.keys(both)).toEqual(['Content-Security-Policy']);
  });

  it('forbids remote code, plugins and framing', () => {
    expect(CONTENT_SECURITY_POLICY).toContain("default-src 'self'");
    expect(CONTENT_SECURITY_POLICY).toContain("object-src 'none'");
    expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-eval');
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/https?:/);
  });

  it('leaves responses of other origins alone', () => {
    const headers = { 'content-type': ['text/html'] };
    expect(withContentSecurityPolicy('https://example.org/', headers, MASTER)).toBe(headers);
    expect(withContentSecurityPolicy('%%%', headers, MASTER)).toBe(headers);
  });
});

describe('permissions', () => {
  it('grants the master clipboard writes and nothing else', () => {
    expect(permissionAllowed('clipboard-sanitized-write', `${MASTER}/`, MASTER)).toBe(true);
    expect(permissionAllowed('clipboard-sanitized-write', 'https://example.org/', MASTER)).toBe(false);
    for (const p of ['media', 'geolocation', 'notifications', 'openExternal', 'clipboard-read']) {
      expect(permissionAllowed(p, `${MASTER}/`, MASTER)).toBe(false);
    }
  });
});
