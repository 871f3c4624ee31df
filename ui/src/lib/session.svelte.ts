import { goto } from '$app/navigation';
import { api, data, handleUnauthorized, setCsrfToken } from './api/client';
import { live } from './live/socket.svelte';

export interface User {
  name: string;
  role: string;
  permissions: string[];
  /** How this session authenticated: `jwt` after a login, `local` for the desktop's credential... */
  method: string;
}

/**
 * Who is using the UI. The master's auth plugin answers `GET /api/v1/auth/me`; a master without
 * it (that route answers 404) or with it off has an open API, and then every
 * page and action is shown. Pages and actions the role
 * lacks are hidden with `can()`; the API refuses them anyway (403).
 */
class Session {
  user = $state<User | null>(null);
  /** False when the master has no authentication: nobody logs in. */
  authEnabled = $state(true);
  loaded = $state(false);

  async load(): Promise<'ok' | 'login'> {
    // A master without the auth plugin has no /auth/me (404); with it turned off (`--auth off`)
    // everyone is an anonymous admin. Either way nobody logs in and every page and action is shown.
    // (The public health answer no longer lists plugins: that is for callers with credentials.)
    const { data: me, response } = await api.GET('/api/v1/auth/me');
    if (response.status === 404 || me?.method === 'none') {
      this.authEnabled = false;
      this.user = null;
      this.loaded = true;
      return 'ok';
    }
    if (response.status === 401 || !me) {
      this.user = null;
      this.loaded = true;
      return 'login';
    } else {
      this.authEnabled = true;
      this.user = { name: me.name, role: me.role, permissions: me.permissions, method: me.method };
      setCsrfToken(me.csrf_token);
    }
    this.loaded = true;
    return 'ok';
  }

  can(permission: string): boolean {
    if (!this.authEnabled) return true;
    return this.user?.permissions.includes(permission) ?? false;
  }

  async login(username: string, password: string): Promise<void> {
    const answer = await data(api.POST('/api/v1/auth/login', { body: { username, password } }));
    setCsrfToken(answer.csrf_token);
    await this.load();
  }

  async logout(): Promise<void> {
    live.stop();
    await api.POST('/api/v1/auth/logout').catch(() => undefined);
    this.user = null;
    setCsrfToken(undefined);
    await goto('/login');
  }
}

export const session = new Session();

// A 401 on any call means the session ended (expired, revoked): back to the login page, then
// back here.
handleUnauthorized(() => {
  if (!session.authEnabled || location.pathname === '/login') return;
  session.user = null;
  live.stop();
  void goto(`/login?next=${encodeURIComponent(location.pathname + location.search)}`);
});
