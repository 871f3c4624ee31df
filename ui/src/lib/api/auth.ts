import { apiError } from './errors';

/**
 * The auth plugin's session routes (plugins/auth: login, logout, who am I). They move to the
 * generated client once that plugin is merged and its routes are in openapi.json; until then this
 * is the one place that calls them.
 */
interface Me {
  name: string;
  role: string;
  permissions: string[];
  csrf_token?: string;
}

async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const json: unknown = text ? JSON.parse(text) : undefined;
  return { data: response.ok ? json : undefined, error: response.ok ? undefined : json, response };
}

export const authApi = {
  me: async () => {
    const r = await call('GET', '/api/v1/auth/me');
    return { data: r.data as Me | undefined, response: r.response };
  },
  login: async (username: string, password: string) => {
    const r = await call('POST', '/api/v1/auth/login', { username, password });
    if (!r.response.ok) throw apiError(r.error, r.response);
    return r.data as { csrf_token?: string; user: { name: string; role: string } };
  },
  logout: () => call('POST', '/api/v1/auth/logout'),
};
