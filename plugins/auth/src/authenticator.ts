import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { excerpt, principalFor, UnauthorizedError, type Principal } from '@runner/plugin-sdk';
import { EXTERNAL_PASSWORD, sha256, type Accounts, type User } from './accounts.js';
import { ldapLogin, type LdapConfig } from './ldap.js';
import { signJwt, verifyJwt, type SessionClaims } from './jwt.js';
import type { LoginThrottle } from './login-throttle.js';
import { decoyHash, verifyPassword } from './passwords.js';

/** The one answer to a wrong user name or password: it does not say which was wrong. */
export const BAD_LOGIN = 'invalid username or password';
export const SESSION_COOKIE = 'runner_session';
export const CSRF_HEADER = 'x-csrf-token';

/** The principal of every request when authentication is off (`--auth off`). */
export const ANONYMOUS_ADMIN = principalFor({ id: 'anonymous', name: 'anonymous', role: 'admin', method: 'none' });
const LOCAL = principalFor({ id: 'local', name: 'local', role: 'admin', method: 'local' });

export interface Session {
  token: string;
  jti: string;
  /** Unix seconds. */
  expires: number;
  csrf: string;
}

interface BasicEntry {
  userId: string;
  /** The hash the password was checked against: a password change invalidates the entry. */
  passwordHash: string;
  until: number;
}

const SESSION_REFUSED = 'the session token is invalid, expired or logged out; log in again';
const VERIFIED_CACHE_MAX = 10_000;
const BASIC_CACHE_MS = 5 * 60_000;
const BASIC_CACHE_MAX = 1000;

/**
 * Establishes who a request comes from: HTTP Basic, `Authorization: Bearer` with a session token
 * (JWT), an API token or the local credential, or the web UI's session cookie. Every lookup is a
 * map read or one HMAC; Basic's scrypt check is remembered for a few minutes per header so that
 * scripts using Basic do not pay tens of milliseconds on every call.
 */
export class Authenticator {
  private readonly basic = new Map<string, BasicEntry>();
  /** Basic headers whose password was wrong, by the hash they were checked against ('' for no such user). */
  private readonly basicFailed = new Map<string, { passwordHash: string; until: number }>();
  private readonly basicChecks = new Map<string, Promise<User>>();
  /** Session tokens whose signature was checked: expiry, revocation and the user are still read each time. */
  private readonly verified = new Map<string, SessionClaims>();

  constructor(
    private readonly accounts: Accounts,
    private readonly secret: Buffer,
    private readonly localTokenHash: string,
    private readonly throttle: LoginThrottle,
    private readonly sessionMs: number,
    private readonly now: () => number = Date.now,
    private readonly ldap?: LdapConfig,
    /** Origins besides the master's own that may send changes (http.cors_origins; `*` for any). */
    private readonly allowedOrigins: readonly string[] = [],
  ) {}

  /**
   * The caller, undefined when the request carries no credentials; throws 401 for credentials
   * that are wrong, expired or revoked (and, for a cookie session, a mutating call without the
   * CSRF header). Synchronous for tokens and cookies, a promise only for Basic (its password
   * check may wait): the guard answers most requests without a microtask turn.
   */
  authenticate(
    headers: IncomingHttpHeaders,
    address: string,
    mutating: boolean,
  ): Principal | undefined | Promise<Principal | undefined> {
    const header = headers.authorization;
    if (header) {
      const space = header.indexOf(' ');
      const scheme = header.slice(0, space).toLowerCase();
      const value = header.slice(space + 1).trim();
      if (scheme === 'bearer' && space > 0) return this.bearer(value);
      if (scheme === 'basic' && space > 0) {
        // A browser sends Basic credentials it has cached with any request to this host, a foreign
        // page's form post included: a change from another origin must prove itself otherwise.
        if (mutating && foreignOrigin(headers, this.allowedOrigins)) {
          throw new UnauthorizedError(
            `HTTP Basic is not accepted on a request that changes state from another origin (${excerpt(String(headers.origin))}); log in for a session token instead`,
          );
        }
        return this.basicAuth(header, value, address);
      }
      throw new UnauthorizedError('unsupported Authorization scheme; use Basic or Bearer');
    }
    const cookie = cookieValue(headers.cookie, SESSION_COOKIE);
    if (cookie === undefined) return undefined;
    const { principal, jti } = this.session(cookie);
    // The cookie goes with every request the browser makes, including ones a foreign page starts:
    // a change must also carry the CSRF token, which only our own page can read.
    if (mutating && !safeEqual(String(headers[CSRF_HEADER] ?? ''), this.csrfFor(jti))) {
      throw new UnauthorizedError(`a session cookie needs the ${CSRF_HEADER} header on requests that change state`);
    }
    return principal;
  }

  /** Checks a user name and password (POST /auth/login, Basic): the user, or 401 / 429. */
  async login(name: string, password: string, address: string): Promise<User> {
    this.throttle.check(name, address);
    this.throttle.attempt(name, address);
    const user = this.accounts.userByName(name);
    // Local users first; names unknown here (or known from the directory) are the directory's.
    if (this.ldap && (!user || user.password_hash === EXTERNAL_PASSWORD)) {
      const found = await ldapLogin(this.ldap, name, password);
      if (!found) throw new UnauthorizedError(BAD_LOGIN);
      const known = await this.accounts.upsertExternal(name, found.role, new Date(this.now()));
      this.throttle.succeeded(name, address);
      this.accounts.secrets.set(`password:${name}`, password);
      return known;
    }
    // An unknown user costs one scrypt too, so timing does not tell whether the name exists.
    const ok = await verifyPassword(password, user?.password_hash ?? (await decoyHash()));
    if (!user || !ok) throw new UnauthorizedError(BAD_LOGIN);
    this.throttle.succeeded(name, address);
    this.accounts.secrets.set(`password:${name}`, password);
    return user;
  }

  issueSession(user: User): Session {
    const ims = this.now();
    const iat = Math.floor(ims / 1000);
    const jti = randomUUID();
    const expires = iat + Math.floor(this.sessionMs / 1000);
    const token = signJwt({ sub: user.id, name: user.name, jti, iat, ims, exp: expires }, this.secret);
    return { token, jti, expires, csrf: this.csrfFor(jti) };
  }

  /** The session a JWT stands for (logout revokes it). */
  session(token: string): { principal: Principal; jti: string; expires: number } {
    const nowSeconds = Math.floor(this.now() / 1000);
    let claims = this.verified.get(token);
    if (!claims) {
      const verified = verifyJwt(token, this.secret, nowSeconds);
      if ('refused' in verified) throw new UnauthorizedError(SESSION_REFUSED);
      claims = verified.claims;
      if (this.verified.size >= VERIFIED_CACHE_MAX) this.verified.clear();
      this.verified.set(token, claims);
    }
    if (claims.exp <= nowSeconds || this.accounts.isRevoked(claims.jti)) throw new UnauthorizedError(SESSION_REFUSED);
    // The role is the user's now, not when the token was issued; a removed user's tokens die with it.
    const user = this.accounts.userById(claims.sub);
    if (!user) throw new UnauthorizedError(SESSION_REFUSED);
    // Sessions issued before the user's password was changed (by a session issued after) end.
    const floor = this.accounts.sessionsValidAfter(user.id);
    if (floor !== undefined && (claims.ims ?? claims.iat * 1000) < floor) throw new UnauthorizedError(SESSION_REFUSED);
    return {
      principal: principalFor({ id: user.id, name: user.name, role: user.role, method: 'jwt', session: claims.jti }),
      jti: claims.jti,
      expires: claims.exp,
    };
  }

  private bearer(value: string): Principal {
    if (value.startsWith('rnr_local_')) {
      if (sha256(value) === this.localTokenHash) return LOCAL;
      throw new UnauthorizedError(
        "the local credential is not this master's (it changes at every start; read <data-dir>/auth/local.token again)",
      );
    }
    if (value.startsWith('rnr_')) {
      const token = this.accounts.tokenByHash(sha256(value));
      if (!token || (token.expires_at !== null && Date.parse(token.expires_at) <= this.now())) {
        throw new UnauthorizedError('the API token is invalid, expired or revoked');
      }
      this.accounts.secrets.set(`token:${token.name}`, value);
      return principalFor({ id: token.id, name: token.name, role: token.role, method: 'token' });
    }
    return this.session(value).principal;
  }

  private async basicAuth(header: string, value: string, address: string): Promise<Principal> {
    const key = sha256(header);
    const cached = this.basic.get(key);
    const now = this.now();
    if (cached && cached.until > now) {
      const user = this.accounts.userById(cached.userId);
      if (user && user.password_hash === cached.passwordHash) return basicPrincipal(user);
      this.basic.delete(key);
    }
    // A header that failed is refused again without a hash while the password it was checked
    // against stands: a client repeating a wrong password costs less than one with the right one.
    const failed = this.basicFailed.get(key);
    if (failed && failed.until > now) {
      const name = Buffer.from(value, 'base64').toString('utf8').split(':')[0];
      if ((this.accounts.userByName(name)?.password_hash ?? '') === failed.passwordHash) {
        this.throttle.check(name, address);
        this.throttle.attempt(name, address);
        throw new UnauthorizedError(BAD_LOGIN);
      }
      this.basicFailed.delete(key);
    }
    // Concurrent requests with the same new header (a client opening many connections) share one check.
    const pending = this.basicChecks.get(key);
    if (pending) return basicPrincipal(await pending);
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new UnauthorizedError('malformed Basic credentials (expected base64 of user:password)');
    const check = this.login(decoded.slice(0, colon), decoded.slice(colon + 1), address);
    this.basicChecks.set(key, check);
    try {
      const user = await check.catch((error: unknown) => {
        if (error instanceof UnauthorizedError && error.message === BAD_LOGIN) {
          if (this.basicFailed.size >= BASIC_CACHE_MAX) this.basicFailed.clear();
          const passwordHash = this.accounts.userByName(decoded.slice(0, colon))?.password_hash ?? '';
          this.basicFailed.set(key, { passwordHash, until: now + BASIC_CACHE_MS });
        }
        throw error;
      });
      if (this.basic.size >= BASIC_CACHE_MAX) this.basic.clear();
      this.basic.set(key, { userId: user.id, passwordHash: user.password_hash, until: now + BASIC_CACHE_MS });
      return basicPrincipal(user);
    } finally {
      this.basicChecks.delete(key);
    }
  }

  /** Logout: the session stops working before it expires. */
  revoke(jti: string, expires: number): Promise<void> {
    return this.accounts.revokeSession(jti, expires);
  }

  /** The CSRF token that goes with a session token (for the UI after a reload). */
  csrfOf(token: string): string {
    return this.csrfFor(this.session(token).jti);
  }

  private csrfFor(jti: string): string {
    return createHmac('sha256', this.secret).update(`csrf:${jti}`).digest('base64url');
  }
}

function basicPrincipal(user: User): Principal {
  return principalFor({ id: user.id, name: user.name, role: user.role, method: 'basic' });
}

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** An `Origin` header naming a site other than the master (by its Host) and not listed as allowed. */
function foreignOrigin(headers: IncomingHttpHeaders, allowed: readonly string[]): boolean {
  const origin = headers.origin;
  if (origin === undefined || allowed.includes('*') || allowed.includes(origin)) return false;
  try {
    return new URL(origin).host !== String(headers.host ?? '').toLowerCase();
  } catch {
    return true;
  }
}

/** One cookie's value from a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}
