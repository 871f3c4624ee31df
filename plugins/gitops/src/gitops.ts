import { posix } from 'node:path';
import {
  AGENT_NAME_PATTERN,
  isRunnerError,
  WorkflowValidationError,
  withUnitOfWork,
  type EventBus,
  type FlowsService,
  type HooksService,
  type Logger,
  type Migration,
  type SchedulesService,
  type Store,
  type StoreReader,
  type StoreTransaction,
  type UnitOfWork,
  type WorkflowEngine,
  type WorkflowProblem,
} from '@runner/plugin-sdk';
import { createTwoFilesPatch } from 'diff';
import type { GitSession } from './auth.js';
import { GitMirror, type GitCommit } from './git.js';
import { parseManifest, type Declared, type Manifest } from './manifest.js';
import { readState, STATE, SyncClaims, type Claim } from './sync-claim.js';

export const GITOPS_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'the applied commit, the claim of the running sync, and what each sync applied',
    sql: `CREATE TABLE gitops_state (
      id TEXT PRIMARY KEY,
      commit_id TEXT,
      commit_author TEXT,
      commit_message TEXT,
      applied_at TEXT,
      applied_by TEXT,
      sync_owner TEXT,
      sync_by TEXT,
      sync_started_at TEXT,
      sync_until INTEGER
    );
    CREATE TABLE gitops_items (
      kind TEXT NOT NULL,
      name TEXT NOT NULL,
      path TEXT NOT NULL,
      version INTEGER,
      PRIMARY KEY (kind, name)
    );`,
  },
];

export type Change = 'added' | 'changed' | 'removed' | 'unchanged';

export interface Settings {
  url: string;
  branch: string;
  /** Directory inside the repository holding the workflows ('' = its root). */
  path: string;
  /** The manifest's file name at that directory's root. */
  manifest: string;
}

export interface FlowChange {
  name: string;
  /** Its file in the repository (the flow's own path for a removed one). */
  path: string;
  change: Change;
  /** The flow's version now (null for a new one). */
  current_version: number | null;
  /** Unified diff from the flow's current YAML to the repository's. */
  unified: string;
}

export interface ItemChange {
  name: string;
  change: Change;
}

export interface Plan {
  commit: GitCommit;
  applied_commit: string | null;
  flows: FlowChange[];
  hooks: ItemChange[];
  schedules: ItemChange[];
  /** file:line:column problems: a sync of this commit would change nothing. */
  problems: string[];
}

export interface SyncResult {
  commit: GitCommit;
  previous_commit: string | null;
  flows: (ItemChange & { version: number | null })[];
  hooks: ItemChange[];
  schedules: ItemChange[];
}

export interface Drift {
  flow: string;
  path: string;
  applied_version: number;
  /** null: deleted since the sync. */
  current_version: number | null;
  edits: { version: number; author: string; message: string; created_at: string }[];
}

export interface Status {
  configured: boolean;
  url: string;
  branch: string;
  path: string;
  applied: { commit: string; author: string; message: string; at: string; by: string } | null;
  syncing: { master: string; by: string; since: string } | null;
  drift: Drift[];
}

interface Target {
  commit: GitCommit;
  flows: { name: string; path: string; yaml: string }[];
  manifest: Manifest;
  problems: WorkflowProblem[];
}

export interface GitOpsDeps {
  store: Store;
  engine: WorkflowEngine;
  flows: FlowsService;
  hooks?: HooksService;
  schedules?: SchedulesService;
  settings: Settings;
  /** Where the bare copy of the branch is kept. */
  mirrorDir: string;
  /** Opens the credentials of one round of git commands. */
  openSession: () => Promise<GitSession>;
  /** This master's id: the owner of the syncs it claims. */
  masterId: string;
  logger: Logger;
  now?: () => Date;
  /** Hears `gitops.synced` and `gitops.sync_failed` (the audit log records them). */
  events?: Pick<EventBus, 'emit'>;
  /** Called once a sync's claim is durable, before it reads the repository (tests hold a sync there). */
  afterClaim?: () => Promise<void>;
}

/** A service that checks a declaration before a sync writes it (HooksService, SchedulesService). */
type Checker = { check(value: never): Promise<void> };

/** Whether a sync applied a new commit or changed a flow, hook or schedule. */
const changedAnything = (result: SyncResult) =>
  result.previous_commit !== result.commit.id ||
  result.flows.length + result.hooks.length + result.schedules.length > 0;

const WORKFLOW_FILE = /\.ya?ml$/;
const short = (id: string) => id.slice(0, 12);

/**
 * GitOps: the flows, hooks and schedules a git branch declares, compared with what the master
 * holds (diff), applied all or nothing (sync, one at a time across masters: a claim on the state
 * row), and the edits made outside git since the last sync (status's drift).
 */
export class GitOps {
  private readonly mirror: GitMirror;
  /** Git commands on the mirror, one round at a time on this master (a fetch locks its refs). */
  private gitTurn: Promise<unknown> = Promise.resolve();
  private readonly now: () => Date;
  private readonly claims: SyncClaims;

  constructor(private readonly deps: GitOpsDeps) {
    this.mirror = new GitMirror(deps.mirrorDir, deps.settings.url, deps.settings.branch);
    this.now = deps.now ?? (() => new Date());
    this.claims = new SyncClaims(deps.store, deps.masterId, deps.logger, this.now);
  }

  async open(): Promise<void> {
    await this.deps.store.migrate('gitops', GITOPS_MIGRATIONS);
    await this.deps.store.run('INSERT INTO gitops_state (id) VALUES (?) ON CONFLICT (id) DO NOTHING', [STATE]);
  }

  async status(): Promise<Status> {
    const row = await readState(this.deps.store);
    const { url, branch, path } = this.deps.settings;
    const until = Number(row.sync_until ?? 0);
    return {
      configured: url !== '',
      url,
      branch,
      path,
      applied: row.commit_id
        ? {
            commit: row.commit_id,
            author: row.commit_author ?? '',
            message: row.commit_message ?? '',
            at: row.applied_at ?? '',
            by: row.applied_by ?? '',
          }
        : null,
      syncing:
        row.sync_owner && until > this.now().getTime()
          ? { master: row.sync_owner, by: row.sync_by ?? '', since: row.sync_started_at ?? '' }
          : null,
      drift: await this.drift(),
    };
  }

  /** Flows changed outside git since the sync that applied them: newer versions, or deleted. */
  private async drift(): Promise<Drift[]> {
    const items = await this.deps.store.all<{ name: string; path: string; version: number }>(
      "SELECT name, path, version FROM gitops_items WHERE kind = 'flow' ORDER BY name",
    );
    const drift: Drift[] = [];
    for (const item of items) {
      const applied = Number(item.version);
      const flow = await this.deps.flows.get(item.name);
      if (flow && flow.version === applied) continue;
      const edits = flow
        ? (await this.deps.flows.versions(item.name))
            .filter((v) => v.version > applied)
            .map(({ version, author, message, created_at }) => ({ version, author, message, created_at }))
        : [];
      drift.push({
        flow: item.name,
        path: item.path,
        applied_version: applied,
        current_version: flow?.version ?? null,
        edits,
      });
    }
    return drift;
  }

  /** What a sync of the branch's head would change, and the problems that would stop it. */
  async diff(): Promise<Plan> {
    const target = await this.read();
    return this.plan(target);
  }

  /**
   * Applies the branch's head: claims the sync (a ConflictError when one runs anywhere), reads
   * and validates everything (a WorkflowValidationError listing every problem, nothing changed),
   * then writes the flows, hooks, schedules and the applied commit in one unit of work: all of it
   * commits, or none. Told as `gitops.synced`, or `gitops.sync_failed` with the reason.
   */
  async sync(by: string): Promise<SyncResult> {
    const claim = await this.claims.take(by);
    let commit: string | null = null;
    try {
      await this.deps.afterClaim?.();
      const target = await this.read();
      commit = target.commit.id;
      if (target.problems.length > 0) throw new WorkflowValidationError(target.problems);
      const result = await this.apply(target, by, claim);
      // A periodic sync on every master finds the applied commit again and again: not news.
      if (changedAnything(result)) this.tellSynced(result, by);
      return result;
    } catch (error) {
      this.tellFailed(commit, by, error as Error);
      throw error;
    } finally {
      await this.claims.release(claim);
    }
  }

  private tellSynced(result: SyncResult, by: string): void {
    const { commit, previous_commit, flows, hooks, schedules } = result;
    this.deps.logger.info(
      `GitOps sync of ${short(commit.id)} by ${by}: ${flows.length} flow(s), ${hooks.length} hook(s), ${schedules.length} schedule(s) changed`,
    );
    this.deps.events?.emit('gitops.synced', {
      commit: commit.id,
      previous_commit,
      by,
      master: this.deps.masterId,
      flows: flows.length,
      hooks: hooks.length,
      schedules: schedules.length,
    });
  }

  private tellFailed(commit: string | null, by: string, error: Error): void {
    const what = commit ? `of ${short(commit)} ` : '';
    this.deps.logger.warn(`GitOps sync ${what}by ${by} failed, nothing changed: ${error.message}`);
    this.deps.events?.emit('gitops.sync_failed', { commit, by, master: this.deps.masterId, reason: error.message });
  }

  /** Frees the claim of a master that died during a sync (told by the cluster). */
  releaseClaimsOf(masterId: string): Promise<void> {
    return this.claims.releaseOf(masterId);
  }

  /** Fetches the branch and reads its workflows and manifest, every problem collected. */
  private read(): Promise<Target> {
    const turn = this.gitTurn.then(() => this.readNow());
    this.gitTurn = turn.catch(() => undefined);
    return turn;
  }

  private async readNow(): Promise<Target> {
    const { settings } = this.deps;
    const session = await this.deps.openSession();
    let head: string;
    try {
      head = await this.mirror.fetch(session.env);
    } finally {
      session.close();
    }
    const commit = await this.mirror.commit(head);
    const root = settings.path.replace(/^\/+|\/+$/g, '');
    const files = await this.mirror.files(head, root);
    const manifestPath = posix.join(root, settings.manifest);
    const blobs = new Map(files.map((file) => [file.path, file.blob]));
    const problems: WorkflowProblem[] = [];
    const seen = new Map<string, string>();
    const flows: Target['flows'] = [];
    for (const file of files) {
      if (file.path === manifestPath || !WORKFLOW_FILE.test(file.path)) continue;
      const name = posix.basename(file.path).replace(WORKFLOW_FILE, '');
      const problem = (message: string) => problems.push({ file: file.path, line: 1, column: 1, path: '', message });
      if (!AGENT_NAME_PATTERN.test(name)) {
        problem(`"${name}" cannot name a flow: use letters, digits, ".", "_" and "-" (at most 63)`);
        continue;
      }
      if (seen.has(name)) {
        problem(`flow "${name}" is also ${seen.get(name)}: one file per flow name`);
        continue;
      }
      seen.set(name, file.path);
      const yaml = await this.mirror.read(file.blob);
      flows.push({ name, path: file.path, yaml });
      problems.push(...(await this.validate(name, file.path, yaml)));
    }
    const manifestBlob = blobs.get(manifestPath);
    let manifest: Manifest = { hooks: [], schedules: [] };
    if (manifestBlob) {
      const parsed = await parseManifest(await this.mirror.read(manifestBlob), manifestPath, async (relative) => {
        const blob = blobs.get(posix.join(root, relative));
        return blob ? this.mirror.read(blob) : undefined;
      });
      manifest = parsed.manifest;
      problems.push(...parsed.problems, ...(await this.checkManifest(manifest, seen)));
    }
    return { commit, flows, manifest, problems };
  }

  /** The engine's own check, the problems at the repository file (the errors of `runner run`). */
  private async validate(name: string, path: string, yaml: string): Promise<WorkflowProblem[]> {
    try {
      await this.deps.engine.validate({ source: { content: yaml, name, label: path } });
      return [];
    } catch (error) {
      if (error instanceof WorkflowValidationError) return [...error.problems];
      return [{ file: path, line: 1, column: 1, path: '', message: (error as Error).message }];
    }
  }

  /**
   * Each hook and schedule checked by its service, at its place in the manifest, before anything
   * is written (inside the sync's unit the services check nothing that needs another service).
   */
  private async checkManifest(manifest: Manifest, repoFlows: Map<string, string>): Promise<WorkflowProblem[]> {
    const problems: WorkflowProblem[] = [];
    const at = (item: Declared<unknown>, message: string) =>
      problems.push({
        file: item.file,
        line: item.line,
        column: item.column,
        path: item.path,
        message: `${item.path}: ${message}`,
      });
    const check = async (item: Declared<unknown>, service: Checker | undefined, plugin: string) => {
      if (!service) return at(item, `no ${plugin} plugin runs on this master`);
      try {
        await service.check(item.value as never);
      } catch (error) {
        if (!isRunnerError(error)) throw error;
        at(item, error.message);
      }
    };
    for (const hook of manifest.hooks) await check(hook, this.deps.hooks, 'event-hooks');
    const leaving = await this.flowsLeaving(repoFlows);
    for (const job of manifest.schedules) {
      await check(job, this.deps.schedules, 'scheduler');
      const flow = job.value.flow;
      if (flow && leaving.has(flow))
        at(job, `flow: "${flow}" is removed by this sync (an earlier sync made it from ${leaving.get(flow)})`);
      else if (flow && !repoFlows.has(flow) && !(await this.deps.flows.get(flow)))
        at(job, `flow: there is no flow "${flow}" in the repository or on the master`);
    }
    const names = (list: Declared<{ name: string }>[], kind: string) => {
      const seen = new Set<string>();
      for (const item of list) {
        if (seen.has(item.value.name)) at(item, `${kind} "${item.value.name}" is declared twice`);
        seen.add(item.value.name);
      }
    };
    names(manifest.hooks, 'hook');
    names(manifest.schedules, 'schedule');
    return problems;
  }

  /** The flows an earlier sync made whose files are gone from the repository: this sync removes them. */
  private async flowsLeaving(repoFlows: Map<string, string>): Promise<Map<string, string>> {
    const managed = await this.managed('flow');
    return new Map(managed.filter((item) => !repoFlows.has(item.name)).map((item) => [item.name, item.path]));
  }

  /** What the last sync applied of `kind`: read through a unit's tx while one is open. */
  private async managed(
    kind: 'flow' | 'hook' | 'schedule',
    reader: StoreReader = this.deps.store,
  ): Promise<{ name: string; path: string }[]> {
    return reader.all('SELECT name, path FROM gitops_items WHERE kind = ? ORDER BY name', [kind]);
  }

  private async plan(target: Target): Promise<Plan> {
    const label = `${target.commit.id.slice(0, 12)}`;
    const flows: FlowChange[] = [];
    for (const file of target.flows) {
      const current = await this.deps.flows.get(file.name);
      const change: Change = !current ? 'added' : current.yaml === file.yaml ? 'unchanged' : 'changed';
      if (change === 'unchanged') continue;
      flows.push({
        name: file.name,
        path: file.path,
        change,
        current_version: current?.version ?? null,
        unified: createTwoFilesPatch(
          current ? `${file.name}@${current.version}` : '/dev/null',
          `${file.path}@${label}`,
          current?.yaml ?? '',
          file.yaml,
        ),
      });
    }
    const inRepo = new Set(target.flows.map((f) => f.name));
    for (const item of await this.managed('flow')) {
      if (inRepo.has(item.name)) continue;
      const current = await this.deps.flows.get(item.name);
      if (!current) continue;
      flows.push({
        name: item.name,
        path: item.path,
        change: 'removed',
        current_version: current.version,
        unified: createTwoFilesPatch(`${item.name}@${current.version}`, '/dev/null', current.yaml, ''),
      });
    }
    const problemsOnly = target.problems.length > 0;
    return {
      commit: target.commit,
      applied_commit: (await readState(this.deps.store)).commit_id ?? null,
      flows,
      hooks: problemsOnly ? [] : await this.itemChanges('hook', target.manifest.hooks, this.deps.hooks),
      schedules: problemsOnly ? [] : await this.itemChanges('schedule', target.manifest.schedules, this.deps.schedules),
      problems: target.problems.map((p) => `${p.file}:${p.line}:${p.column}: ${p.message}`),
    };
  }

  private async itemChanges(
    kind: 'hook' | 'schedule',
    declared: Declared<{ name: string }>[],
    service: { compare(value: never): 'created' | 'updated' | 'unchanged' } | undefined,
  ): Promise<ItemChange[]> {
    const changes: ItemChange[] = [];
    if (!service) return changes;
    for (const item of declared) {
      const change = service.compare(item.value as never);
      if (change !== 'unchanged')
        changes.push({ name: item.value.name, change: change === 'created' ? 'added' : 'changed' });
    }
    const names = new Set(declared.map((item) => item.value.name));
    for (const item of await this.managed(kind))
      if (!names.has(item.name)) changes.push({ name: item.name, change: 'removed' });
    return changes;
  }

  /** Everything the commit declares, in one unit of work: the fence, flows, hooks, schedules, the record. */
  private apply(target: Target, by: string, claim: Claim): Promise<SyncResult> {
    const work = async (unit: UnitOfWork): Promise<SyncResult> => {
      await this.claims.hold(unit.tx, claim);
      const previous = (await readState(unit.tx)).commit_id ?? null;
      const flows = await this.applyFlows(unit, target);
      const result: SyncResult = {
        commit: target.commit,
        previous_commit: previous,
        flows: flows.changes,
        hooks: await this.applyItems(unit, 'hook', target.manifest.hooks, this.deps.hooks),
        schedules: await this.applyItems(unit, 'schedule', target.manifest.schedules, this.deps.schedules),
      };
      await this.record(unit.tx, target, flows.versions, by);
      return result;
    };
    return withUnitOfWork(this.deps.store, work, (error) =>
      this.deps.logger.warn(
        `GitOps sync of ${short(target.commit.id)} applied, but telling of a change failed: ${error.message}`,
      ),
    );
  }

  /** The repository's flows saved, and the flows an earlier sync made whose files are gone removed. */
  private async applyFlows(unit: UnitOfWork, target: Target) {
    const inRepo = new Set(target.flows.map((f) => f.name));
    const gone = (await this.managed('flow', unit.tx)).map((item) => item.name).filter((name) => !inRepo.has(name));
    const origin = { author: target.commit.author, message: target.commit.message, commit: target.commit.id };
    const batch = await this.deps.flows.applyBatch(
      { save: target.flows.map(({ name, yaml }) => ({ name, yaml })), remove: gone },
      origin,
      unit,
    );
    const versions = new Map(
      [...batch.created, ...batch.updated, ...batch.unchanged].map(({ name, version }) => [name, version]),
    );
    const changes: SyncResult['flows'] = [
      ...batch.created.map(({ name, version }) => ({ name, change: 'added' as Change, version })),
      ...batch.updated.map(({ name, version }) => ({ name, change: 'changed' as Change, version })),
      ...batch.removed.map((name) => ({ name, change: 'removed' as Change, version: null })),
    ];
    return { changes, versions };
  }

  /** Hooks or schedules: the declared ones put, the ones an earlier sync declared and this one does not removed. */
  private async applyItems(
    unit: UnitOfWork,
    kind: 'hook' | 'schedule',
    declared: Declared<{ name: string }>[],
    service:
      | {
          put(value: never, unit: UnitOfWork): Promise<'created' | 'updated' | 'unchanged'>;
          remove(name: string, unit: UnitOfWork): Promise<boolean>;
        }
      | undefined,
  ): Promise<ItemChange[]> {
    const changes: ItemChange[] = [];
    if (!service) return changes;
    for (const item of declared) {
      const change = await service.put(item.value as never, unit);
      if (change !== 'unchanged')
        changes.push({ name: item.value.name, change: change === 'created' ? 'added' : 'changed' });
    }
    const names = new Set(declared.map((item) => item.value.name));
    for (const item of await this.managed(kind, unit.tx))
      if (!names.has(item.name) && (await service.remove(item.name, unit)))
        changes.push({ name: item.name, change: 'removed' });
    return changes;
  }

  /** What this sync applied (for the next one's removals and status's drift), and its commit. */
  private async record(tx: StoreTransaction, target: Target, versions: Map<string, number>, by: string) {
    const item = 'INSERT INTO gitops_items (kind, name, path, version) VALUES (?, ?, ?, ?)';
    await tx.run('DELETE FROM gitops_items');
    for (const flow of target.flows)
      await tx.run(item, ['flow', flow.name, flow.path, versions.get(flow.name) ?? null]);
    for (const hook of target.manifest.hooks)
      await tx.run(item, ['hook', hook.value.name, `${hook.file}:${hook.line}`, null]);
    for (const job of target.manifest.schedules)
      await tx.run(item, ['schedule', job.value.name, `${job.file}:${job.line}`, null]);
    await tx.run(
      'UPDATE gitops_state SET commit_id = ?, commit_author = ?, commit_message = ?, applied_at = ?, applied_by = ? WHERE id = ?',
      [target.commit.id, target.commit.author, target.commit.message, this.now().toISOString(), by, STATE],
    );
  }
}
