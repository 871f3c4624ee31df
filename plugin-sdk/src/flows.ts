import type { RunProgress, RunRecord, RunTrigger } from './engine.js';
import type { VarsFrom } from './workflow.js';
import { createServiceRef } from './service-ref.js';
import type { UnitOfWork } from './unit-of-work.js';

/**
 * A saved workflow (issue 20): its YAML kept with every version that changed it. The scheduler and
 * hooks start flows through `FlowsService.start`, which applies the flow's concurrency and its
 * active flag; they never read the flow's YAML themselves.
 */
export interface Flow {
  name: string;
  description: string;
  tags: string[];
  /** Only active flows run from schedules and hooks; a manual run of an inactive one is allowed. */
  active: boolean;
  /** The current version's number (1 for a new flow). */
  version: number;
  /** The current version's YAML. */
  yaml: string;
  /** ISO 8601 UTC. */
  created_at: string;
  /** ISO 8601 UTC of the last change (a new version, a flag or the description). */
  updated_at: string;
}

/** What started a flow's run and with what. */
export interface FlowStartRequest {
  /** `scheduler` and `hook` refuse an inactive flow; `api`, `cli` and `flow` run it, recorded as a manual run. */
  trigger: RunTrigger;
  /** The user, token, scheduler job (`schedule:<job>`) or hook (`hook:<name>`) that starts it. */
  user?: string;
  /** Merged over the flow's `vars`, as `--var k=v`. */
  vars?: Record<string, string>;
  /** Where `vars` were given (RunRequest.varsFrom): a hook's and a schedule's are `fields`. */
  varsFrom?: VarsFrom;
  /** The stack the run reads (default the flow's `stack:`; see RunRequest.stack). */
  stack?: string;
  /** A run on a production stack confirmed (RunRequest.confirm). */
  confirm?: boolean;
  /** A version other than the current one (`runner run <name> --version n`). */
  version?: number;
  /** Hears the run's progress as it goes (the live view of `runner run <name>`); not for queued starts. */
  observer?: (progress: RunProgress) => void;
}

/**
 * What a start came to under the flow's `concurrency` (limit and behavior): `started` with the
 * run's id and its end; `queued` (behavior `queue`: it starts when a slot frees, across masters);
 * `skipped` (behavior `skip`: the limit was reached, nothing ran).
 */
export type FlowStart =
  | { outcome: 'started'; runId: string; done: Promise<RunRecord> }
  | { outcome: 'queued'; queueId: string }
  | { outcome: 'skipped'; reason: string };

/** One version of a flow, as its history lists it. */
export interface FlowVersionInfo {
  version: number;
  /** Who saved it: a user, a token, or a commit's author (`Ada <ada@example.org>`) for a GitOps sync. */
  author: string;
  message: string;
  /** The git commit it was synced from (GitOps); null for a save made in the UI, the API or the CLI. */
  commit: string | null;
  /** ISO 8601 UTC. */
  created_at: string;
}

/** Who and what a batch of saves records on each version it makes. */
export interface FlowOrigin {
  author: string;
  message: string;
  /** The commit the batch comes from; recorded on every version the batch makes. */
  commit?: string;
}

/** Flows to save (created, or a new version when the YAML differs) and flows to delete, together. */
export interface FlowBatch {
  save: { name: string; yaml: string; description?: string }[];
  remove: string[];
}

/** What a batch did to each flow it named. */
export interface FlowBatchResult {
  created: { name: string; version: number }[];
  updated: { name: string; version: number }[];
  /** Saved with the YAML of their current version: no new version (`version` is that one). */
  unchanged: { name: string; version: number }[];
  removed: string[];
}

/**
 * The saved flows (provided by the flows plugin). Rejects with a NotFoundError (with a
 * did-you-mean) for an unknown flow, an InvalidInputError for an inactive flow started by a
 * schedule or a hook, and a WorkflowValidationError when the stored YAML no longer validates.
 */
export interface FlowsService {
  get(name: string): Promise<Flow | undefined>;
  /** How many flows there are, and how many are active (the dashboard's counts). */
  count(): Promise<{ total: number; active: number }>;
  start(name: string, request: FlowStartRequest): Promise<FlowStart>;
  /** The flow's versions, newest first; a NotFoundError for an unknown flow. */
  versions(name: string): Promise<FlowVersionInfo[]>;
  /**
   * Applies a batch all or nothing (GitOps' sync): every YAML is validated first (a
   * WorkflowValidationError naming `<name>.yaml`, nothing written), then every save and removal is
   * written in one store transaction, each flow's row locked first so that a save made meanwhile on
   * any master is ordered with it. A saved flow whose YAML differs from its current version gets the
   * next version carrying `origin` (author, message, commit); a new one starts at version 1; a
   * removed flow loses its versions and queued runs (a name not saved is ignored). Browsers and
   * other masters hear of each change once the transaction committed.
   *
   * Given a `unit` (UnitOfWork), the batch is written in the unit's transaction and heard of once
   * the whole unit committed; the YAML is then not validated again (the engine may read the store,
   * which the unit holds): validate each with `WorkflowEngine.validate` before the unit opens.
   */
  applyBatch(batch: FlowBatch, origin: FlowOrigin, unit?: UnitOfWork): Promise<FlowBatchResult>;
  /** Names of the flows whose current YAML uses `word` (`secrets.db_password`) as a whole word, sorted. */
  referencing(word: string): Promise<string[]>;
}

export const FlowsRef = createServiceRef<FlowsService>({
  id: 'flows',
  description: 'saved workflows with versions; starts them under their concurrency (flows plugin)',
});
