// Every plugin's migrations, written once in the portable SQL (plugins/store/README.md), applied
// on a real PostgreSQL through the dialect helper: what the PostgreSQL backend will run at start.
import type { Migration } from '@runner/plugin-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_MIGRATIONS } from '../../plugins/auth/src/accounts.js';
import { AUDIT_MIGRATIONS } from '../../plugins/auth/src/audit-log.js';
import { AGENT_MIGRATIONS } from '../../plugins/agent-transport/src/agent-store.js';
import { IDENTITY_MIGRATIONS } from '../../plugins/agent-transport/src/identities.js';
import { GROUP_MIGRATIONS } from '../../plugins/agent-groups/src/group-store.js';
import { RUN_LIFECYCLE_MIGRATIONS } from '../../plugins/engine/src/run-lifecycle-schema.js';
import { RUN_MIGRATIONS } from '../../plugins/engine/src/run-store.js';
import { STATE_MIGRATIONS } from '../../plugins/module-state/src/store-state.js';
import { postgresSchema } from '../../plugins/store/src/sql-dialect.js';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../support/postgres.js';

// In the order the plugins set up (the lifecycle's migrations alter the engine's runs table).
const OWNERS: [string, readonly Migration[]][] = [
  ['auth', ACCOUNT_MIGRATIONS],
  ['audit', AUDIT_MIGRATIONS],
  ['agent-transport', AGENT_MIGRATIONS],
  ['agent-identities', IDENTITY_MIGRATIONS],
  ['agent-groups', GROUP_MIGRATIONS],
  ['engine', RUN_MIGRATIONS],
  ['engine-lifecycle', RUN_LIFECYCLE_MIGRATIONS],
  ['state', STATE_MIGRATIONS],
];

describe.skipIf(!postgresReachable())('plugin migrations on PostgreSQL', () => {
  let db: TestDatabase;
  beforeAll(() => {
    db = createTestDatabase('migrations');
  });
  afterAll(() => db?.drop());

  it('apply in order, each in one transaction, and give the tables and columns the plugins use', () => {
    for (const [owner, migrations] of OWNERS) {
      for (const m of migrations) {
        expect(() => db.psql(postgresSchema(m.sql)), `${owner} migration ${m.id} (${m.description})`).not.toThrow();
      }
    }
    const columns = db.psql(
      "SELECT table_name || '.' || column_name || ':' || data_type FROM information_schema.columns " +
        "WHERE table_schema = current_schema() AND table_name IN ('runs', 'audit_log', 'agents') ORDER BY 1",
    );
    expect(columns).toContain('runs.user:text');
    expect(columns).toContain('runs.duration:double precision');
    expect(columns).toContain('runs.dry_run:bigint');
    expect(columns).toContain('audit_log.id:bigint');
    expect(columns).toContain('agents.cpu_usage:double precision');
  });

  it('runs the portable upserts and an audit insert without an id', () => {
    expect(
      db.psql(`
        INSERT INTO auth_session_floor (user_id, after_ms) VALUES ('u', 1)
          ON CONFLICT (user_id) DO UPDATE SET after_ms = excluded.after_ms;
        INSERT INTO auth_session_floor (user_id, after_ms) VALUES ('u', 1732752000000)
          ON CONFLICT (user_id) DO UPDATE SET after_ms = excluded.after_ms;
        INSERT INTO agent_groups (name, created_at, updated_at) VALUES ('web', 't', 't');
        INSERT INTO agent_group_members (group_name, agent) VALUES ('web', 'a') ON CONFLICT DO NOTHING;
        INSERT INTO agent_group_members (group_name, agent) VALUES ('web', 'a') ON CONFLICT DO NOTHING;
        INSERT INTO audit_log (timestamp, event, "user", ip, resource, action, result, status, request_id)
          VALUES ('t', 'login', 'u', '::1', '/', 'POST', 'ok', 200, 'r');
        SELECT after_ms FROM auth_session_floor;
        SELECT count(*) FROM agent_group_members;
        SELECT id FROM audit_log;`),
    ).toBe('1732752000000\n1\n1\n');
  });
});
