import {
  AGENT_NAME_PATTERN,
  AGENT_NAME_RULE,
  ConflictError,
  InvalidInputError,
  NotFoundError,
  type Migration,
  type SshAuditEntry,
  type SshProfile,
  type Store,
} from '@runner/plugin-sdk';

export const SSH_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'SSH profiles and their audit log',
    sql: `CREATE TABLE ssh_profiles (
        name TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        port INTEGER NOT NULL,
        "user" TEXT NOT NULL,
        auth_type TEXT NOT NULL,
        key_path TEXT,
        has_secret INTEGER NOT NULL DEFAULT 0,
        host_key_type TEXT,
        host_key_fingerprint TEXT,
        host_key TEXT,
        description TEXT NOT NULL DEFAULT '',
        workflows INTEGER NOT NULL DEFAULT 0,
        last_used_at TEXT,
        connection_count INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE ssh_audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        profile TEXT NOT NULL,
        at TEXT NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        detail TEXT NOT NULL,
        result INTEGER
      );
      CREATE INDEX ssh_audit_profile ON ssh_audit (profile, id);`,
  },
];

/** A profile row with its pinned key blob, which the API never shows (the fingerprint says it). */
export interface StoredProfile extends SshProfile {
  host_key_blob?: string;
}

interface ProfileRow {
  name: string;
  host: string;
  port: number;
  user: string;
  auth_type: 'key' | 'password';
  key_path: string | null;
  has_secret: number;
  host_key_type: string | null;
  host_key_fingerprint: string | null;
  host_key: string | null;
  description: string;
  workflows: number;
  last_used_at: string | null;
  connection_count: number;
  created_at: string;
  updated_at: string;
}

export interface ProfileFields {
  host: string;
  port: number;
  user: string;
  auth_type: 'key' | 'password';
  key_path?: string | null;
  has_secret: boolean;
  description: string;
  workflows: boolean;
}

/** Longest detail kept in an audit row: it says what was done, it does not keep a script. */
const MAX_DETAIL = 500;

function toProfile(row: ProfileRow): StoredProfile {
  return {
    name: row.name,
    host: row.host,
    port: Number(row.port),
    user: row.user,
    auth_type: row.auth_type,
    ...(row.key_path ? { key_path: row.key_path } : {}),
    has_secret: Boolean(Number(row.has_secret)),
    ...(row.host_key_fingerprint
      ? { host_key: { type: row.host_key_type ?? 'unknown', fingerprint: row.host_key_fingerprint } }
      : {}),
    ...(row.host_key ? { host_key_blob: row.host_key } : {}),
    description: row.description,
    workflows: Boolean(Number(row.workflows)),
    ...(row.last_used_at ? { last_used_at: row.last_used_at } : {}),
    connection_count: Number(row.connection_count),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The public view: the pinned key's blob stays in the store. */
export function publicProfile(profile: StoredProfile): SshProfile {
  const { host_key_blob: _blob, ...rest } = profile;
  return rest;
}

export function checkProfileName(name: unknown): string {
  if (typeof name !== 'string' || !AGENT_NAME_PATTERN.test(name))
    throw new InvalidInputError(`profile name ${JSON.stringify(name)} is not valid: use ${AGENT_NAME_RULE}`, {
      field: 'name',
    });
  return name;
}

/** SSH profiles and their audit rows in the master's store. Every read goes to the store (several masters share it). */
export class ProfileStore {
  constructor(
    private readonly store: Store,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async open(): Promise<void> {
    await this.store.migrate('ssh-profiles', SSH_MIGRATIONS);
  }

  async list(): Promise<StoredProfile[]> {
    return (await this.store.all<ProfileRow>('SELECT * FROM ssh_profiles ORDER BY name')).map(toProfile);
  }

  async find(name: string): Promise<StoredProfile | undefined> {
    const row = await this.store.get<ProfileRow>('SELECT * FROM ssh_profiles WHERE name = ?', [name]);
    return row ? toProfile(row) : undefined;
  }

  async require(name: string): Promise<StoredProfile> {
    const profile = await this.find(name);
    if (!profile) throw new NotFoundError(`no SSH profile named ${name}`);
    return profile;
  }

  async create(name: string, fields: ProfileFields): Promise<StoredProfile> {
    const at = this.now().toISOString();
    try {
      await this.store.run(
        `INSERT INTO ssh_profiles (name, host, port, "user", auth_type, key_path, has_secret, description, workflows, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          checkProfileName(name),
          fields.host,
          fields.port,
          fields.user,
          fields.auth_type,
          fields.key_path ?? null,
          fields.has_secret ? 1 : 0,
          fields.description,
          fields.workflows ? 1 : 0,
          at,
          at,
        ],
      );
    } catch (error) {
      if (error instanceof ConflictError) throw new ConflictError(`an SSH profile named ${name} exists`);
      throw error;
    }
    return this.require(name);
  }

  /**
   * Replaces the connection fields. A change of host or port unpins the host key: the new address
   * must be trusted again, explicitly.
   */
  async update(name: string, fields: ProfileFields): Promise<StoredProfile> {
    const before = await this.require(name);
    const moved = before.host !== fields.host || before.port !== fields.port;
    await this.store.run(
      `UPDATE ssh_profiles SET host = ?, port = ?, "user" = ?, auth_type = ?, key_path = ?, has_secret = ?, description = ?,
         workflows = ?, updated_at = ?${moved ? ', host_key = NULL, host_key_type = NULL, host_key_fingerprint = NULL' : ''}
       WHERE name = ?`,
      [
        fields.host,
        fields.port,
        fields.user,
        fields.auth_type,
        fields.key_path ?? null,
        fields.has_secret ? 1 : 0,
        fields.description,
        fields.workflows ? 1 : 0,
        this.now().toISOString(),
        name,
      ],
    );
    return this.require(name);
  }

  async remove(name: string): Promise<void> {
    await this.require(name);
    await this.store.transaction([
      { sql: 'DELETE FROM ssh_profiles WHERE name = ?', params: [name] },
      { sql: 'DELETE FROM ssh_audit WHERE profile = ?', params: [name] },
    ]);
  }

  async pinHostKey(name: string, key: { type: string; fingerprint: string; key: string }): Promise<void> {
    await this.store.run(
      'UPDATE ssh_profiles SET host_key = ?, host_key_type = ?, host_key_fingerprint = ? WHERE name = ?',
      [key.key, key.type, key.fingerprint, name],
    );
  }

  async unpinHostKey(name: string): Promise<void> {
    await this.require(name);
    await this.store.run(
      'UPDATE ssh_profiles SET host_key = NULL, host_key_type = NULL, host_key_fingerprint = NULL, updated_at = ? WHERE name = ?',
      [this.now().toISOString(), name],
    );
  }

  async countConnection(name: string): Promise<void> {
    await this.store.run(
      'UPDATE ssh_profiles SET connection_count = connection_count + 1, last_used_at = ? WHERE name = ?',
      [this.now().toISOString(), name],
    );
  }

  async audit(entry: Omit<SshAuditEntry, 'id' | 'at'>): Promise<void> {
    await this.store.run(
      'INSERT INTO ssh_audit (profile, at, actor, action, detail, result) VALUES (?, ?, ?, ?, ?, ?)',
      [
        entry.profile,
        this.now().toISOString(),
        entry.actor,
        entry.action,
        entry.detail.length > MAX_DETAIL ? `${entry.detail.slice(0, MAX_DETAIL)}...` : entry.detail,
        entry.result ?? null,
      ],
    );
  }

  /** Newest first. */
  async auditLog(name: string, limit: number, offset: number): Promise<{ entries: SshAuditEntry[]; total: number }> {
    const total = await this.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM ssh_audit WHERE profile = ?', [name]);
    const rows = await this.store.all<SshAuditEntry>(
      'SELECT * FROM ssh_audit WHERE profile = ? ORDER BY id DESC LIMIT ? OFFSET ?',
      [name, limit, offset],
    );
    return {
      entries: rows.map((r) => ({ ...r, id: Number(r.id), result: r.result === null ? null : Number(r.result) })),
      total: Number(total?.n ?? 0),
    };
  }
}
