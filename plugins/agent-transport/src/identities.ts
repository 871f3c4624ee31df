import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { agentNameKey, RESERVED_AGENT_NAMES, type Logger, type Migration, type Store } from '@runner/plugin-sdk';
import type { TokenCheck } from './token.js';

/**
 * Agent identities (issue 9 item 6). The join token only enrols a name that has no credential
 * yet; at that first registration the master issues the agent its own credential, a 32-byte
 * random secret, and keeps only its SHA-256. A secret rather than a client certificate signed by a
 * master CA because it works the same with and without TLS on the gRPC port, needs no CA to keep
 * (no expiry, rotation or chain to get wrong on agent hosts), travels in the call metadata the
 * transport already uses, and revoking it is one row.
 */
export const IDENTITY_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: "agents' own credentials (SHA-256 only)",
    sql: `CREATE TABLE agent_credentials (
      name TEXT PRIMARY KEY,
      hash TEXT NOT NULL,
      issued_at TEXT NOT NULL,
      revoked_at TEXT
    )`,
  },
];

export interface Identity {
  name: string;
  /** Hex SHA-256 of the credential; empty for a name revoked before it ever had one. */
  hash: string;
  issued_at: string;
  revoked_at: string | null;
}

/** How a connection proved itself before it registered. */
export type Proof = 'credential' | 'join-token';

/** Why a connection is refused, with the gRPC status name it ends with. */
export interface Refusal {
  refused: 'UNAUTHENTICATED' | 'PERMISSION_DENIED' | 'ALREADY_EXISTS' | 'INVALID_ARGUMENT';
  why: string;
}

export const CREDENTIAL_HEADER = 'x-runner-agent-credential';
/** Where the agent keeps its credential, for messages (the agent plugin writes it). */
const CREDENTIAL_FILE = '<data-dir>/agent.credential';

export function isRefusal(value: unknown): value is Refusal {
  return typeof value === 'object' && value !== null && 'refused' in value;
}

/** `rac_` + 32 random bytes: the prefix makes a leaked credential easy to recognise and grep for. */
export function generateCredential(): string {
  return `rac_${randomBytes(32).toString('base64url')}`;
}

function digest(credential: string): Buffer {
  return createHash('sha256').update(credential).digest();
}

/**
 * The credentials the master issued, by agent name: all in memory (a check costs one hash, no
 * store read), written through to the table `agent_credentials` when the master has a store.
 */
export class AgentIdentities {
  private readonly byName = new Map<string, Identity>();
  /** Rows to write (null: delete), coalesced: a thousand agents enrolling at once make one transaction. */
  private readonly pending = new Map<string, Identity | null>();
  private batch?: Promise<void>;
  private writes: Promise<unknown> = Promise.resolve();
  private written?: (name: string, identity: Identity | null) => void;

  constructor(
    private readonly logger: Logger,
    private readonly store?: Store,
  ) {}

  async open(): Promise<void> {
    if (!this.store) return;
    await this.store.migrate('agent-identities', IDENTITY_MIGRATIONS);
    for (const row of await this.store.all<Identity>(
      'SELECT name, hash, issued_at, revoked_at FROM agent_credentials',
    )) {
      this.byName.set(row.name, { ...row, revoked_at: row.revoked_at ?? null });
    }
  }

  /** Waits for pending writes (an enrolment is written without holding up its registration). */
  async close(): Promise<void> {
    await this.batch?.catch(() => undefined);
    await this.writes;
  }

  get(name: string): Identity | undefined {
    return this.byName.get(name);
  }

  /** What the registry shows of an agent's identity. */
  summary(name: string): { enrolled_at: string | null; revoked_at: string | null } {
    const identity = this.byName.get(name);
    return { enrolled_at: identity?.hash ? identity.issued_at : null, revoked_at: identity?.revoked_at ?? null };
  }

  /**
   * Checks a new connection before anything is read from it: the agent's own credential for the
   * name it claims, else the join token. A credential the master has no record of (the agent was
   * removed, or the master's store is new) falls back to the join token, which enrols it again.
   */
  authenticate(name: string, credential: string | undefined, joinToken: () => TokenCheck): Proof | Refusal {
    const identity = name ? this.byName.get(name) : undefined;
    if (credential && identity) {
      if (identity.revoked_at) return revoked(identity);
      if (identity.hash && timingSafeEqual(digest(credential), Buffer.from(identity.hash, 'hex'))) return 'credential';
      return {
        refused: 'UNAUTHENTICATED',
        why: `the credential presented for agent ${name} is not the one this master issued it (issued ${identity.issued_at}); a host with a copy of another agent's data directory must use its own name`,
      };
    }
    const check = joinToken();
    if (check === 'ok') return 'join-token';
    return {
      refused: 'UNAUTHENTICATED',
      why:
        check === 'missing'
          ? 'no join token presented (give the agent --token or RUNNER_JOIN_TOKEN; `runner agent token show` on the master prints it)'
          : 'wrong join token (compare with `runner agent token show` on the master)',
    };
  }

  /**
   * Decides a registration, synchronously so two connections racing for one name cannot both
   * enrol it. A credential holder is admitted (and replaces its own stale session); the join token
   * enrols a name with no credential and returns the new credential, the only time it exists in
   * clear on the master. `live` is the address of a connected session holding the name.
   */
  admit(name: string, proof: Proof, live?: string): { credential?: string } | Refusal {
    const identity = this.byName.get(name);
    if (identity?.revoked_at) return revoked(identity);
    if (proof === 'credential' && identity) return {};
    if (identity) {
      return {
        refused: 'ALREADY_EXISTS',
        why: live
          ? `agent ${name} is connected (from ${live}) with its own credential; the join token cannot take its name: start this agent under another name`
          : `agent ${name} is enrolled (since ${identity.issued_at}) and reconnects with its own credential (${CREDENTIAL_FILE} on its host); the join token cannot take its name: use another name, or free it on the master with \`runner agent remove ${name}\``,
      };
    }
    const unfit = this.unfitName(name);
    if (unfit) return unfit;
    const credential = generateCredential();
    const enrolled: Identity = {
      name,
      hash: digest(credential).toString('hex'),
      issued_at: new Date().toISOString(),
      revoked_at: null,
    };
    this.byName.set(name, enrolled);
    // Not awaited: the agent is admitted meanwhile. A failed write is logged; the agent then enrols
    // again after a master restart, as if the master had never known it.
    this.persist(name, enrolled).catch(() => undefined);
    return { credential };
  }

  /**
   * A new name must not pose as the master or as every agent (`delegate_to: localhost` and `all`
   * mean those), nor as an enrolled agent that differs only by case or a trailing dot: an operator
   * reading `Web-1` in a list would take it for `web-1`.
   */
  private unfitName(name: string): Refusal | undefined {
    const key = agentNameKey(name);
    if (RESERVED_AGENT_NAMES.includes(key)) {
      return {
        refused: 'INVALID_ARGUMENT',
        why: `agent name ${JSON.stringify(name)} is reserved (${RESERVED_AGENT_NAMES.join(', ')} name the master or every agent); start this agent under another name`,
      };
    }
    for (const other of this.byName.keys()) {
      if (other !== name && agentNameKey(other) === key) {
        return {
          refused: 'ALREADY_EXISTS',
          why: `agent name ${JSON.stringify(name)} differs from the enrolled agent ${JSON.stringify(other)} only by case or a trailing dot; start this agent under another name`,
        };
      }
    }
    return undefined;
  }

  /** Marks the name's credential revoked (a name without one is blocked all the same). */
  async revoke(name: string): Promise<Identity> {
    const existing = this.byName.get(name);
    if (existing?.revoked_at) return existing;
    const revokedAt = new Date().toISOString();
    const identity: Identity = existing
      ? { ...existing, revoked_at: revokedAt }
      : { name, hash: '', issued_at: revokedAt, revoked_at: revokedAt };
    this.byName.set(name, identity);
    await this.persist(name, identity);
    return identity;
  }

  /** Forgets the name's credential, revoked or not: the join token may enrol the name again. */
  async forget(name: string): Promise<void> {
    if (!this.byName.delete(name)) return;
    await this.persist(name, null);
  }

  /**
   * Tells `listener` of every identity this master wrote, once written: the other masters sharing
   * the store keep theirs in memory too (`learn`), so an agent enrolled here is known there.
   */
  onWrite(listener: (name: string, identity: Identity | null) => void): void {
    this.written = listener;
  }

  /** An identity another master sharing the store wrote. */
  learn(name: string, identity: Identity | null): void {
    if (identity === null) this.byName.delete(name);
    else this.byName.set(name, identity);
  }

  /** Resolves once the row is written with the next batch (one transaction per tick). */
  private persist(name: string, identity: Identity | null): Promise<void> {
    if (!this.store) return Promise.resolve();
    this.pending.set(name, identity);
    this.batch ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.batch = undefined;
      return this.flush();
    });
    const batch = this.batch;
    batch.then(
      () => this.written?.(name, identity),
      () => undefined,
    );
    return batch;
  }

  private flush(): Promise<void> {
    const store = this.store as Store;
    const rows = [...this.pending];
    this.pending.clear();
    const statements = rows.map(([name, row]) =>
      row === null
        ? { sql: 'DELETE FROM agent_credentials WHERE name = ?', params: [name] }
        : {
            sql: 'INSERT INTO agent_credentials (name, hash, issued_at, revoked_at) VALUES (?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET hash = excluded.hash, issued_at = excluded.issued_at, revoked_at = excluded.revoked_at',
            params: [name, row.hash, row.issued_at, row.revoked_at],
          },
    );
    // Batches are written one after the other, in order.
    const done = this.writes
      .then(() => store.transaction(statements))
      .then(
        () => undefined,
        (error: Error) => {
          this.logger.error(`could not save ${rows.length} agent credential record(s): ${error.message}`);
          throw error;
        },
      );
    this.writes = done.catch(() => undefined);
    return done;
  }
}

function revoked(identity: Identity): Refusal {
  return {
    refused: 'PERMISSION_DENIED',
    why: `the credential of agent ${identity.name} was revoked on the master at ${identity.revoked_at}; an admin frees the name with \`runner agent remove ${identity.name}\`, then the join token can enrol it again`,
  };
}
