import type { Migration } from '@runner/plugin-sdk';

/**
 * Migrations owner of the tables and columns below. An owner of its own, not more ids in
 * RUN_MIGRATIONS: both lists grow in parallel, and the store refuses ids out of order within one
 * owner. Applied after RUN_MIGRATIONS (it alters their `runs` table).
 */
export const RUN_LIFECYCLE_OWNER = 'engine.lifecycle';

export const RUN_LIFECYCLE_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'indexes for every executions filter; run leases; process groups of runs; pruned logs',
    // Every index ends with (started_at, id): the order of the list, so a page is an index walk
    // (backwards) that stops after `limit` rows instead of a sort of every match.
    sql: `
      ALTER TABLE runs ADD COLUMN lease_owner TEXT;
      ALTER TABLE runs ADD COLUMN lease_expires_at TEXT;
      ALTER TABLE runs ADD COLUMN logs_pruned_at TEXT;
      DROP INDEX IF EXISTS runs_by_start;
      DROP INDEX IF EXISTS runs_by_workflow;
      CREATE INDEX runs_by_start ON runs (started_at, id);
      CREATE INDEX runs_by_workflow ON runs (workflow_name, started_at, id);
      CREATE INDEX runs_by_status ON runs (status, started_at, id);
      CREATE INDEX runs_by_workflow_status ON runs (workflow_name, status, started_at, id);
      CREATE INDEX runs_logs_kept ON runs (started_at, id) WHERE logs_pruned_at IS NULL;
      CREATE TABLE run_processes (
        run_id TEXT NOT NULL,
        pgid INTEGER NOT NULL,
        owner TEXT NOT NULL,
        boot_id TEXT,
        start_ticks TEXT,
        started_at TEXT NOT NULL,
        PRIMARY KEY (run_id, pgid)
      );`,
  },
];
