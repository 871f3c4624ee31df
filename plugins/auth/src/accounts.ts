import { hash, randomBytes, randomUUID } from 'node:crypto';
import {
  ConflictError,
  InvalidInputError,
  NotFoundError,
  isRole,
  ROLES,
  type Migration,
  type Role,
  type Store,
} from '@runner/plugin-sdk';
import { PasswordPolicy } from './password-policy.js';
import { KnownSecrets } from './known-secrets.js';
import { hashPassword } from './passwords.js';

export interface User {
  id: string;
  name: string;
  role: Role;
  password_hash: string;
  created_at: string;
  updated_at: string;
}

export interface ApiToken {
  id: string;
  name: string;
  role: Role;
  /** sha256 of the token: tokens are 256 random bits, so a fast hash is enough (no dictionary to try). */
  hash: string;
  created_by: string;
  created_at: string;
  /** ISO 8601, null for a token that does not expire. */
  expires_at: string | null;
}

/** A user or token as the API shows it: never a hash. */
export type PublicUser = Omit<User, 'password_hash'>;
export type PublicToken = Omit<ApiToken, 'hash'>;

export const ACCOUNT_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'users, API tokens and revoked session tokens',
    sql: `CREATE TABLE auth_users (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        role TEXT NOT NULL,
        password_hash TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE auth_tokens (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        role TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT
      );
      CREATE TABLE auth_revoked (
        jti TEXT PRIMARY KEY,
        expires_at INTEGER NOT NULL
      );`,
  },
  {
    id: 2,
    description: "when a user's sessions were last ended (a password change ends the others)",
    sql: `CREATE TABLE auth_session_floor (
        user_id TEXT PRIMARY KEY,
        after_ms INTEGER NOT NULL
      );`,
  },
];

/** The password hash of a user whose password the directory checks (never a valid scrypt hash). */
export const EXTERNAL_PASSWORD = '!ldap';

/** What a user or token name may be (also what a failed login's name must be to be audited as typed). */
export const USER_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

function checkName(name: string, what: string): void {
  if (!USER_NAME.test(name)) {
    throw new InvalidInputError(
      `${what} name "${name}" is not valid: 1-64 characters, letters, digits, '.', '_', '@' and '-', starting with a letter or digit`,
      { field: 'name' },
    );
  }
}

export function checkRole(role: unknown, field = 'role'): Role {
  if (!isRole(role)) {
    throw new InvalidInputError(`role "${String(role)}" does not exist; roles are ${ROLES.join(', ')}`, { field });
  }
  return role;
}

export const sha256 = (text: string): string => hash('sha256', text, 'hex');

/** A new API token: `rnr_` and 256 random bits. */
export const newTokenSecret = (): string => `rnr_${randomBytes(32).toString('base64url')}`;

export const publicUser = ({ password_hash: _hash, ...user }: User): PublicUser => user;
export const publicToken = ({ hash: _hash, ...token }: ApiToken): PublicToken => token;

/**
 * Users, API tokens and revoked session ids: durable in the store, and mirrored in memory so the
 * authentication guard answers from maps on every request (no SQL on the hot path).
 */
export class Accounts {
  private readonly usersById = new Map<string, User>();
  private readonly usersByName = new Map<string, User>();
  private readonly tokensByHash = new Map<string, ApiToken>();
  private readonly tokensByName = new Map<string, ApiToken>();
  private readonly revoked = new Map<string, number>();
  /** Sessions of a user issued before this time (Unix ms) are no longer accepted. */
  private readonly sessionFloor = new Map<string, number>();

  constructor(
    private readonly store: Store,
    /** What a password being set must satisfy (auth.password_min_length, auth.password_check_common). */
    readonly passwords: PasswordPolicy = new PasswordPolicy(),
    /**
     * Passwords and token secrets masked in everything that leaves the master, from their first
     * use on (not when set or created: the answer that shows a new token or generated password
     * must show it).
     */
    readonly secrets: KnownSecrets = new KnownSecrets(),
  ) {}

  async open(nowSeconds: number): Promise<void> {
    await this.store.migrate('auth', ACCOUNT_MIGRATIONS);
    // Revocations of tokens that have expired anyway need not be kept (later ones go by retention).
    await this.store.run('DELETE FROM auth_revoked WHERE expires_at <= ?', [nowSeconds]);
    this.fill(await this.read());
  }

  /**
   * Reads everything again: another master sharing the store changed accounts (the copy in
   * memory is this master's only). The maps are swapped at once, never seen half-filled.
   */
  async reload(): Promise<void> {
    this.fill(await this.read());
  }

  private async read() {
    const [users, tokens, revoked, floors] = await Promise.all([
      this.store.all<User>('SELECT * FROM auth_users'),
      this.store.all<ApiToken>('SELECT * FROM auth_tokens'),
      this.store.all<{ jti: string; expires_at: number }>('SELECT * FROM auth_revoked'),
      this.store.all<{ user_id: string; after_ms: number }>('SELECT * FROM auth_session_floor'),
    ]);
    return { users, tokens, revoked, floors };
  }

  private fill({ users, tokens, revoked, floors }: Awaited<ReturnType<Accounts['read']>>): void {
    for (const map of [
      this.usersById,
      this.usersByName,
      this.tokensByHash,
      this.tokensByName,
      this.revoked,
      this.sessionFloor,
    ])
      map.clear();
    for (const user of users) this.remember(user);
    for (const token of tokens) this.rememberToken(token);
    for (const row of revoked) this.revoked.set(row.jti, row.expires_at);
    for (const row of floors) this.sessionFloor.set(row.user_id, row.after_ms);
  }

  /** Unix ms before which the user's sessions are refused, if their sessions were ever ended. */
  sessionsValidAfter(userId: string): number | undefined {
    return this.sessionFloor.get(userId);
  }

  /** Ends every session of the user issued before `atMs` (a session issued later still works). */
  async endSessionsBefore(userId: string, atMs: number): Promise<void> {
    await this.store.run(
      'INSERT INTO auth_session_floor (user_id, after_ms) VALUES (?, ?) ON CONFLICT (user_id) DO UPDATE SET after_ms = excluded.after_ms',
      [userId, atMs],
    );
    this.sessionFloor.set(userId, atMs);
  }

  userCount(): number {
    return this.usersById.size;
  }
  userById(id: string): User | undefined {
    return this.usersById.get(id);
  }
  userByName(name: string): User | undefined {
    return this.usersByName.get(name);
  }
  users(): User[] {
    return [...this.usersByName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  async addUser(name: string, role: Role, password: string, now: Date): Promise<User> {
    checkName(name, 'user');
    if (this.usersByName.has(name))
      throw new ConflictError(`user "${name}" exists already`, { details: { user: name } });
    const at = now.toISOString();
    const user: User = {
      id: `usr_${randomUUID()}`,
      name,
      role,
      password_hash: await hashPassword(this.passwords.check(password, 'password', name)),
      created_at: at,
      updated_at: at,
    };
    await this.store.run(
      'INSERT INTO auth_users (id, name, role, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
      [user.id, user.name, user.role, user.password_hash, user.created_at, user.updated_at],
    );
    this.remember(user);
    return user;
  }

  async setPassword(name: string, password: string, now: Date): Promise<User> {
    const user = this.requireUser(name);
    const updated = {
      ...user,
      password_hash: await hashPassword(this.passwords.check(password, 'password', name)),
      updated_at: now.toISOString(),
    };
    await this.store.run('UPDATE auth_users SET password_hash = ?, updated_at = ? WHERE id = ?', [
      updated.password_hash,
      updated.updated_at,
      user.id,
    ]);
    this.remember(updated);
    this.secrets.forget(`password:${name}`);
    return updated;
  }

  async setRole(name: string, role: Role, now: Date): Promise<User> {
    const user = this.requireUser(name);
    if (user.role === 'admin' && role !== 'admin') this.keepAnAdmin(user, 'take the admin role from');
    const updated = { ...user, role, updated_at: now.toISOString() };
    await this.store.run('UPDATE auth_users SET role = ?, updated_at = ? WHERE id = ?', [
      role,
      updated.updated_at,
      user.id,
    ]);
    this.remember(updated);
    return updated;
  }

  async removeUser(name: string): Promise<User> {
    const user = this.requireUser(name);
    if (user.role === 'admin') this.keepAnAdmin(user, 'remove');
    await this.store.run('DELETE FROM auth_users WHERE id = ?', [user.id]);
    this.usersById.delete(user.id);
    this.usersByName.delete(user.name);
    this.secrets.forget(`password:${name}`);
    return user;
  }

  /**
   * The local record of a user an LDAP directory or an OpenID provider vouched for: created on first
   * login, its role refreshed at every login. Its password hash is a marker (`!ldap`, `!oidc`) that
   * no password matches and that says where the user comes from.
   */
  async upsertExternal(name: string, role: Role, now: Date, marker: string = EXTERNAL_PASSWORD): Promise<User> {
    const existing = this.usersByName.get(name);
    if (existing && existing.password_hash !== marker) {
      throw new ConflictError(`user "${name}" exists already from another source; it cannot log in this way`);
    }
    if (existing && existing.role === role) return existing;
    const at = now.toISOString();
    if (existing) {
      const updated = { ...existing, role, updated_at: at };
      await this.store.run('UPDATE auth_users SET role = ?, updated_at = ? WHERE id = ?', [role, at, existing.id]);
      this.remember(updated);
      return updated;
    }
    checkName(name, 'user');
    const user: User = {
      id: `usr_${randomUUID()}`,
      name,
      role,
      password_hash: marker,
      created_at: at,
      updated_at: at,
    };
    await this.store.run(
      'INSERT INTO auth_users (id, name, role, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
      [user.id, user.name, user.role, user.password_hash, user.created_at, user.updated_at],
    );
    this.remember(user);
    return user;
  }

  requireUser(name: string): User {
    const user = this.usersByName.get(name);
    if (!user) throw new NotFoundError(`user "${name}" does not exist`, { details: { user: name } });
    return user;
  }

  tokenByHash(hash: string): ApiToken | undefined {
    return this.tokensByHash.get(hash);
  }
  tokens(): ApiToken[] {
    return [...this.tokensByName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Creates a token; the secret is returned here once and only its hash is kept. */
  async addToken(
    name: string,
    role: Role,
    createdBy: string,
    expiresAt: Date | null,
    now: Date,
  ): Promise<{ token: ApiToken; secret: string }> {
    checkName(name, 'token');
    if (this.tokensByName.has(name)) {
      throw new ConflictError(`token "${name}" exists already; revoke it first or pick another name`, {
        details: { token: name },
      });
    }
    const secret = newTokenSecret();
    const token: ApiToken = {
      id: `tok_${randomUUID()}`,
      name,
      role,
      hash: sha256(secret),
      created_by: createdBy,
      created_at: now.toISOString(),
      expires_at: expiresAt?.toISOString() ?? null,
    };
    await this.store.run(
      'INSERT INTO auth_tokens (id, name, role, hash, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [token.id, token.name, token.role, token.hash, token.created_by, token.created_at, token.expires_at],
    );
    this.rememberToken(token);
    return { token, secret };
  }

  async revokeToken(name: string): Promise<ApiToken> {
    const token = this.tokensByName.get(name);
    if (!token) throw new NotFoundError(`token "${name}" does not exist`, { details: { token: name } });
    await this.store.run('DELETE FROM auth_tokens WHERE id = ?', [token.id]);
    this.tokensByName.delete(token.name);
    this.tokensByHash.delete(token.hash);
    this.secrets.forget(`token:${name}`);
    return token;
  }

  isRevoked(jti: string): boolean {
    return this.revoked.has(jti);
  }

  /** Logout: the session token stops working before it expires. */
  async revokeSession(jti: string, expiresAt: number): Promise<void> {
    await this.store.run('INSERT INTO auth_revoked (jti, expires_at) VALUES (?, ?) ON CONFLICT (jti) DO NOTHING', [
      jti,
      expiresAt,
    ]);
    this.revoked.set(jti, expiresAt);
  }

  /** How many revocations are kept, and when the first of them expires (ISO 8601). */
  revocations(): { count: number; oldest?: string } {
    let first: number | undefined;
    for (const expires of this.revoked.values()) if (first === undefined || expires < first) first = expires;
    return {
      count: this.revoked.size,
      ...(first === undefined ? {} : { oldest: new Date(first * 1000).toISOString() }),
    };
  }

  /** Forgets up to `limit` revocations of sessions expired at `nowSeconds`; resolves with how many. */
  async forgetExpiredRevocations(nowSeconds: number, limit: number): Promise<number> {
    const jtis = (
      await this.store.all<{ jti: string }>(
        'SELECT jti FROM auth_revoked WHERE expires_at <= ? ORDER BY expires_at LIMIT ?',
        [nowSeconds, limit],
      )
    ).map((row) => row.jti);
    if (jtis.length === 0) return 0;
    await this.store.run(`DELETE FROM auth_revoked WHERE jti IN (${jtis.map(() => '?').join(', ')})`, jtis);
    for (const jti of jtis) this.revoked.delete(jti);
    return jtis.length;
  }

  private keepAnAdmin(user: User, what: string): void {
    const admins = [...this.usersById.values()].filter((u) => u.role === 'admin');
    if (admins.length === 1 && admins[0].id === user.id) {
      throw new ConflictError(`cannot ${what} "${user.name}": it is the last admin`, { details: { user: user.name } });
    }
  }

  private remember(user: User): void {
    const previous = this.usersById.get(user.id);
    if (previous) this.usersByName.delete(previous.name);
    this.usersById.set(user.id, user);
    this.usersByName.set(user.name, user);
  }

  private rememberToken(token: ApiToken): void {
    this.tokensByHash.set(token.hash, token);
    this.tokensByName.set(token.name, token);
  }
}
