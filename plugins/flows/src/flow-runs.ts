import { randomUUID } from 'node:crypto';
import {
  InvalidInputError,
  messageOf,
  type FlowStart,
  type FlowStartRequest,
  type Logger,
  type RunRecord,
  type RunRequest,
  type Store,
  type StoreTransaction,
  type WorkflowEngine,
} from '@runner/plugin-sdk';
import { lockFlow, type FlowStore } from './flow-store.js';

/** A slot that was claimed but never got its run id (its master died while starting it) is freed after this. */
const STARTING_TIMEOUT_MS = 120_000;
/** How often open slots are checked against the runs they hold, and queues drained (any master). */
export const SWEEP_MS = 15_000;

interface SlotRow {
  id: string;
  flow: string;
  version: number;
  state: 'queued' | 'starting' | 'running' | 'cancelling' | 'ended';
  run_id: string | null;
  run_trigger: string;
  started_by: string | null;
  inactive: number | boolean;
  vars: string | null;
  stack?: string | null;
  confirmed?: number;
  started_at: string | null;
}

type Decision =
  | { kind: 'start'; slot: SlotRow; cancel?: string }
  | { kind: 'queue'; slot: SlotRow }
  | { kind: 'skip'; reason: string };

/** Slots that hold a place under the flow's limit (a run being cancelled to make room does not). */
const OPEN = "state IN ('starting', 'running')";

/**
 * A flow's runs under its concurrency (`limit`, `behavior`). Each run holds a slot: a row of
 * `flow_slots`, claimed in a transaction that first locks the flow's row, so that two masters on
 * one PostgreSQL count the same slots and never both take the last one. A queued start is a row
 * too (state `queued`): whichever master ends a run of the flow starts the oldest one, and a sweep
 * on every master frees slots whose runs ended where nobody saw it (a master killed) and drains.
 */
export class FlowRuns {
  private sweeping = false;

  constructor(
    private readonly flows: FlowStore,
    private readonly store: Store,
    private readonly engine: WorkflowEngine,
    private readonly logger: Logger,
    /** Cancels a run wherever it runs (this master, or the others through the cluster). */
    private readonly cancelEverywhere: (runId: string, reason: string) => void,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async start(name: string, request: FlowStartRequest): Promise<FlowStart & { inactive: boolean; version: number }> {
    const flow = await this.flows.require(name);
    if (!flow.active && (request.trigger === 'scheduler' || request.trigger === 'hook'))
      throw new InvalidInputError(
        `flow "${name}" is inactive: schedules and hooks start only active flows (runner flow activate ${name})`,
        { field: 'flow', details: { flow: name } },
      );
    const version = request.version ?? flow.version;
    if (request.version !== undefined) await this.flows.version(name, version);
    // A flow whose YAML no longer validates (an agent it names was removed) takes no slot.
    await this.engine.validate(runRequest(name, version, request));
    await this.reconcile(name);
    const slot: SlotRow = {
      id: randomUUID(),
      flow: name,
      version,
      state: 'starting',
      run_id: null,
      run_trigger: request.trigger,
      started_by: request.user ?? null,
      inactive: flow.active ? 0 : 1,
      vars: request.vars ? JSON.stringify(request.vars) : null,
      stack: request.stack ?? null,
      confirmed: request.confirm === true ? 1 : 0,
      started_at: this.now().toISOString(),
    };
    const decision = await this.store.withTransaction((tx) => this.claim(tx, slot));
    const inactive = !flow.active;
    if (decision.kind === 'skip') return { outcome: 'skipped', reason: decision.reason, inactive, version };
    if (decision.kind === 'queue') return { outcome: 'queued', queueId: slot.id, inactive, version };
    if (decision.cancel)
      this.cancelEverywhere(decision.cancel, `cancelled: a newer run of flow ${name} took its place`);
    const started = await this.launch(decision.slot, request.observer);
    return { outcome: 'started', runId: started.runId, done: started.done, inactive, version };
  }

  /** Decides under the flow's row lock: start, queue, skip, or start after cancelling the oldest. */
  private async claim(tx: StoreTransaction, slot: SlotRow): Promise<Decision> {
    await lockFlow(tx, slot.flow);
    const flow = await tx.get<{ limit: number | null; behavior: string | null }>(
      'SELECT concurrency_limit AS "limit", concurrency_behavior AS behavior FROM flows WHERE name = ?',
      [slot.flow],
    );
    if (flow?.limit != null) {
      const open = await tx.all<{ id: string; run_id: string | null }>(
        `SELECT id, run_id FROM flow_slots WHERE flow = ? AND ${OPEN} ORDER BY started_at, id`,
        [slot.flow],
      );
      if (open.length >= Number(flow.limit)) {
        if (flow.behavior === 'skip')
          return { kind: 'skip', reason: `flow ${slot.flow} already runs ${open.length} of ${flow.limit} at once` };
        if (flow.behavior === 'queue') {
          await insertSlot(tx, { ...slot, state: 'queued', started_at: null }, this.now());
          return { kind: 'queue', slot };
        }
        const oldest = open.find((o) => o.run_id !== null);
        if (!oldest)
          return { kind: 'skip', reason: `flow ${slot.flow}: every running slot is still starting; nothing to cancel` };
        await tx.run("UPDATE flow_slots SET state = 'cancelling' WHERE id = ?", [oldest.id]);
        await insertSlot(tx, slot, this.now());
        return { kind: 'start', slot, cancel: oldest.run_id as string };
      }
    }
    await insertSlot(tx, slot, this.now());
    return { kind: 'start', slot };
  }

  /** Starts the run of a claimed slot; a start that fails frees the slot (and lets the queue on). */
  private async launch(slot: SlotRow, observer?: FlowStartRequest['observer']) {
    const request = runRequest(slot.flow, Number(slot.version), {
      trigger: slot.run_trigger as FlowStartRequest['trigger'],
      ...(slot.started_by ? { user: slot.started_by } : {}),
      ...(slot.vars ? { vars: JSON.parse(slot.vars) as Record<string, string> } : {}),
      ...(slot.stack ? { stack: slot.stack } : {}),
      ...(Number(slot.confirmed) === 1 ? { confirm: true } : {}),
    });
    let started;
    try {
      started = await this.engine.start(request, observer);
    } catch (error) {
      await this.end(slot.id, { status: 'failed_to_start' });
      void this.drain(slot.flow);
      throw error;
    }
    await this.store.run("UPDATE flow_slots SET run_id = ?, state = 'running' WHERE id = ? AND state = 'starting'", [
      started.runId,
      slot.id,
    ]);
    const done = started.done.then(async (record) => {
      await this.end(slot.id, record).catch((error: unknown) =>
        this.logger.warn(`flow ${slot.flow}: recording the end of run ${record.id} failed: ${messageOf(error)}`),
      );
      void this.drain(slot.flow);
      return record;
    });
    return { runId: started.runId, done };
  }

  /**
   * Ends a slot once (whichever master sees the run end first), adding the run to the flow's
   * statistics in the same transaction.
   */
  private async end(
    slotId: string,
    run: { status: string; id?: string; duration?: number; startedAt?: string } | RunRecord,
  ) {
    const at = this.now().toISOString();
    let ran: string | undefined;
    await this.store.withTransaction(async (tx) => {
      const slot = await tx.get<SlotRow>('SELECT * FROM flow_slots WHERE id = ?', [slotId]);
      if (!slot || slot.state === 'ended') return;
      await lockFlow(tx, slot.flow);
      await tx.run("UPDATE flow_slots SET state = 'ended', run_status = ?, ended_at = ? WHERE id = ?", [
        run.status,
        at,
        slotId,
      ]);
      if (!run.id) return;
      await tx.run(
        `UPDATE flows SET runs_total = runs_total + 1, runs_succeeded = runs_succeeded + ?, runs_seconds = runs_seconds + ?,
           last_run_id = ?, last_run_at = ?, last_run_status = ? WHERE name = ?`,
        [run.status === 'succeeded' ? 1 : 0, run.duration ?? 0, run.id, run.startedAt ?? at, run.status, slot.flow],
      );
      ran = slot.flow;
    });
    if (ran) this.flows.ran(ran);
  }

  /** Starts queued runs of the flow while it has free slots. */
  async drain(name: string): Promise<void> {
    for (;;) {
      let next: SlotRow | undefined;
      try {
        next = await this.store.withTransaction(async (tx) => {
          await lockFlow(tx, name);
          const flow = await tx.get<{ limit: number | null }>(
            'SELECT concurrency_limit AS "limit" FROM flows WHERE name = ?',
            [name],
          );
          const open = await tx.get<{ n: number }>(`SELECT count(*) AS n FROM flow_slots WHERE flow = ? AND ${OPEN}`, [
            name,
          ]);
          if (flow?.limit != null && Number(open?.n ?? 0) >= Number(flow.limit)) return undefined;
          const queued = await tx.get<SlotRow>(
            "SELECT * FROM flow_slots WHERE flow = ? AND state = 'queued' ORDER BY queued_at, id LIMIT 1",
            [name],
          );
          if (!queued) return undefined;
          const startedAt = this.now().toISOString();
          await tx.run("UPDATE flow_slots SET state = 'starting', started_at = ? WHERE id = ?", [startedAt, queued.id]);
          return { ...queued, state: 'starting' as const, started_at: startedAt };
        });
      } catch (error) {
        this.logger.warn(`flow ${name}: starting a queued run failed: ${messageOf(error)}`);
        return;
      }
      if (!next) return;
      await this.launch(next).catch((error: unknown) =>
        this.logger.warn(`flow ${name}: a queued run could not start: ${messageOf(error)}`),
      );
    }
  }

  /**
   * Frees the flow's slots whose runs ended without this process seeing it (run by a master that
   * stopped, or whose end was recorded by another master), and slots stuck before their run started.
   */
  async reconcile(name: string): Promise<void> {
    const open = await this.store.all<SlotRow>(
      "SELECT * FROM flow_slots WHERE flow = ? AND state IN ('starting', 'running', 'cancelling')",
      [name],
    );
    for (const slot of open) {
      if (slot.run_id === null) {
        const since = Date.parse(slot.started_at ?? '') || 0;
        if (this.now().getTime() - since > STARTING_TIMEOUT_MS) await this.end(slot.id, { status: 'failed_to_start' });
        continue;
      }
      const run = await this.engine.get(slot.run_id, { log: false });
      if (!run) await this.end(slot.id, { status: 'interrupted' });
      else if (run.status !== 'running') await this.end(slot.id, run);
    }
  }

  /** What the sweep does on every master: reconcile flows with open slots, start what is queued. */
  async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      const flows = await this.store.all<{ flow: string }>(
        "SELECT DISTINCT flow FROM flow_slots WHERE state <> 'ended'",
      );
      for (const { flow } of flows) {
        await this.reconcile(flow);
        await this.drain(flow);
      }
    } catch (error) {
      this.logger.warn(`flows: checking open slots failed: ${messageOf(error)}`);
    } finally {
      this.sweeping = false;
    }
  }
}

async function insertSlot(tx: StoreTransaction, slot: SlotRow, now: Date): Promise<void> {
  await tx.run(
    `INSERT INTO flow_slots (id, flow, version, state, run_trigger, started_by, inactive, vars, stack, confirmed, queued_at, started_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      slot.id,
      slot.flow,
      slot.version,
      slot.state,
      slot.run_trigger,
      slot.started_by,
      slot.inactive ? 1 : 0,
      slot.vars,
      slot.stack ?? null,
      slot.confirmed ?? 0,
      now.toISOString(),
      slot.started_at,
    ],
  );
}

/** The engine's request for a flow's run: the `flow` source names the flow and version it ran. */
export function runRequest(name: string, version: number, request: Omit<FlowStartRequest, 'version'>): RunRequest {
  return {
    source: { kind: 'flow', ref: name, version },
    workflowName: name,
    trigger: request.trigger,
    ...(request.user === undefined ? {} : { user: request.user }),
    ...(request.vars === undefined ? {} : { vars: request.vars }),
    ...(request.varsFrom === undefined ? {} : { varsFrom: request.varsFrom }),
    ...(request.stack === undefined ? {} : { stack: request.stack }),
    ...(request.confirm === undefined ? {} : { confirm: request.confirm }),
  };
}
