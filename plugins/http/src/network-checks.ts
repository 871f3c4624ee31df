import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { ForbiddenError, InvalidInputError, RunnerError, type Guard, type Logger } from '@runner/plugin-sdk';

/** True for an address only this host reaches: 127.0.0.0/8, ::1, localhost. */
export function isLoopback(address: string): boolean {
  const host = address.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::ffff:127.0.0.1';
}

/** The host part of a Host header (`name:port`, `[::1]:8080`), lower-cased. */
function hostName(header: string): string {
  const text = header.trim().toLowerCase();
  if (text.startsWith('[')) return text.slice(1, text.indexOf(']'));
  const colon = text.lastIndexOf(':');
  return colon > 0 && text.indexOf(':') === colon ? text.slice(0, colon) : text;
}

/**
 * Whether a `Host` header names this master. A DNS-rebinding page reaches a loopback master under
 * its own domain name (`Host: evil.example:8080`); IP literals and `localhost` cannot be rebound, and
 * other names must be listed in `http.allowed_hosts`. A missing Host (HTTP/1.0 tools) is accepted.
 */
export function hostAllowed(header: string | undefined, allowedHosts: readonly string[]): boolean {
  if (header === undefined || header === '') return true;
  const name = hostName(header);
  return name === 'localhost' || isIP(name) !== 0 || allowedHosts.some((h) => h.toLowerCase() === name);
}

/**
 * Whether a request's `Origin` may use the API: the master's own origin (same host and port as
 * the request's `Host`), or one listed in `http.cors_origins` (`*` for any).
 */
export function originAllowed(
  origin: string | undefined,
  host: string | undefined,
  corsOrigins: readonly string[],
): boolean {
  if (origin === undefined) return true;
  if (corsOrigins.includes('*') || corsOrigins.includes(origin)) return true;
  try {
    return host !== undefined && new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

/** The guard that refuses a foreign Host before authentication runs (order 10). */
export function hostGuard(allowedHosts: readonly string[]): Guard {
  return {
    name: 'http.host',
    order: 10,
    check({ req }) {
      if (hostAllowed(req.headers.host, allowedHosts)) return;
      throw new ForbiddenError(
        `Host "${req.headers.host}" is not a name of this master; add it to http.allowed_hosts if it is`,
      );
    },
  };
}

/**
 * Refuses to expose the API beyond this host without authentication, or with it over plain HTTP
 * (passwords, tokens and session cookies would cross the network in clear), unless `--insecure`
 * says so; then warns at every start.
 */
export function checkExposure(
  bindAddress: string,
  exposure: { authEnabled: boolean; tls: boolean; insecure: boolean },
  logger: Logger,
): void {
  if (isLoopback(bindAddress)) return;
  const { authEnabled, tls, insecure } = exposure;
  if (authEnabled && tls) return;
  const what = authEnabled
    ? 'over plain HTTP: passwords, tokens and session cookies would cross the network in clear'
    : 'with authentication off: anyone who reaches it could run commands as this user';
  if (!insecure) {
    const fix = authEnabled
      ? 'Serve HTTPS (--tls-cert F --tls-key K), bind 127.0.0.1, or add --insecure'
      : 'Turn authentication on (--auth on), bind 127.0.0.1, or add --insecure';
    throw new InvalidInputError(`refusing to serve the REST API on ${bindAddress} ${what}. ${fix}`, {
      field: 'http.bind_address',
    });
  }
  logger.warn(`INSECURE: the REST API listens on ${bindAddress} ${what}`);
}

/**
 * Headers every answer carries. The UI's page sets its script hashes in a meta CSP (SvelteKit);
 * the header adds what a meta tag cannot (`frame-ancestors`) and, for API answers, forbids any
 * content at all. HSTS only over TLS: over plain HTTP browsers ignore it anyway.
 */
export function securityHeaders(path: string, tls: boolean): [string, string][] {
  const api = path === '/api' || path.startsWith('/api/');
  const headers: [string, string][] = [
    [
      'content-security-policy',
      api
        ? "default-src 'none'; frame-ancestors 'none'"
        : "frame-ancestors 'none'; object-src 'none'; base-uri 'self'; form-action 'self'",
    ],
    ['x-frame-options', 'DENY'],
    ['referrer-policy', 'no-referrer'],
  ];
  // Login answers carry session tokens, and who-am-I a CSRF token: no cache may keep them.
  if (path.startsWith('/api/v1/auth/')) headers.push(['cache-control', 'no-store']);
  if (tls) headers.push(['strict-transport-security', 'max-age=31536000']);
  return headers;
}

/**
 * Why a WebSocket upgrade may not proceed yet, before its guards: the server stopping (503), or an
 * origin not allowed (403: browsers do not apply CORS to WebSockets, so the origin is checked
 * here, the master's own or one listed). Undefined when it may. The hub and plugins' routes share it.
 */
export function upgradeRefusal(
  req: IncomingMessage,
  corsOrigins: readonly string[],
  closing: boolean,
): RunnerError | undefined {
  if (closing) return new RunnerError('unavailable', 'the server is stopping', { status: 503 });
  const origin = req.headers.origin;
  if (!originAllowed(origin, req.headers.host, corsOrigins))
    return new ForbiddenError(`origin ${origin} is not allowed (config http.cors_origins)`);
  return undefined;
}
