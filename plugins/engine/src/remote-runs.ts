import { randomBytes } from 'node:crypto';
import type {
  Cluster,
  LogFollower,
  LogFollowerEvent,
  Logger,
  RunStatus,
  Store,
  WorkflowEngine,
} from '@runner/plugin-sdk';

/** How often a follower of another master's run checks the store that the run still runs. */
const FOLLOW_CHECK_MS = 5_000;
/** How long the owner has to say it took a cancel: past this the answer is a 503 naming it. */
const CANCEL_ACK_MS = 5_000;
/** Then the run's end is awaited in the store this long at most (tasks stopping); then it is shown as it is. */
const CANCEL_WAIT_MS = 20_000;
const CANCEL_POLL_MS = 100;

interface FollowMessage {
  followId: string;
  event: LogFollowerEvent;
}

/**
 * Runs executed by another master sharing the store: cancel them and follow their logs from here,
 * through the cluster service (requests answered by the owner, the run's `lease_owner`). Also
 * answers those requests for this master's own runs.
 */
export class RemoteRuns {
  /** Follows other masters asked of this one, by id: how to stop each. */
  private readonly served = new Map<string, () => void>();
  /** Follows of this master's clients on other masters' runs, by id. */
  private readonly following = new Map<string, LogFollower>();
  private readonly offs: (() => void)[] = [];

  constructor(
    private readonly cluster: Cluster,
    private readonly store: Store,
    private readonly logger: Logger,
  ) {}

  /** Answers the other masters' requests about this master's runs. */
  serve(engine: WorkflowEngine): void {
    const { cluster } = this;
    this.offs.push(
      cluster.handle<{ runId: string; by?: string; reason?: string }, null>('engine.cancel', (p) => {
        // Answered at once: the asking master waits for the end in the store.
        engine
          .cancel(p.runId, { by: p.by, reason: p.reason })
          .catch((error: Error) =>
            this.logger.warn(`cancelling run ${p.runId} for another master failed: ${error.message}`),
          );
        return null;
      }),
      cluster.handle<{ runId: string; followId: string }, { written: number } | null>('engine.follow', (p, from) => {
        const follow = engine.followLog(p.runId, (event) => {
          cluster.publish('engine.log', { followId: p.followId, event } satisfies FollowMessage, { to: from });
          if (event.kind === 'end') this.served.delete(p.followId);
        });
        if (!follow) return null;
        this.served.set(p.followId, () => follow.stop());
        return { written: follow.written };
      }),
      cluster.subscribe<{ followId: string }>('engine.unfollow', ({ followId }) => {
        this.served.get(followId)?.();
        this.served.delete(followId);
      }),
      cluster.subscribe<FollowMessage>('engine.log', ({ followId, event }) => this.following.get(followId)?.(event)),
    );
  }

  /** The master executing the run when that is another live or dead master; undefined otherwise. */
  async ownerOf(runId: string): Promise<string | undefined> {
    const row = await this.store.get<{ status: RunStatus; lease_owner: string | null }>(
      'SELECT status, lease_owner FROM runs WHERE id = ?',
      [runId],
    );
    if (row?.status !== 'running' || row.lease_owner === null || row.lease_owner === this.cluster.masterId)
      return undefined;
    return row.lease_owner;
  }

  /**
   * Cancels a run another master executes and waits for its end there (503 naming that master
   * when it does not take the cancel); false when no other master holds the run.
   */
  async cancel(runId: string, options: { by?: string; reason?: string }): Promise<boolean> {
    const owner = await this.ownerOf(runId);
    if (owner === undefined) return false;
    await this.cluster.request(owner, 'engine.cancel', { runId, ...options }, { timeoutMs: CANCEL_ACK_MS });
    const deadline = Date.now() + CANCEL_WAIT_MS;
    while (Date.now() < deadline && (await this.ownerOf(runId)) !== undefined)
      await new Promise((resolve) => setTimeout(resolve, CANCEL_POLL_MS));
    return true;
  }

  /**
   * Follows the log of a run another master executes: its lines come through the cluster. The
   * store is checked every few seconds, so a follow ends when the run does even if that master
   * died (the survivor that ended the run does not know this follow).
   */
  async followLog(runId: string, listener: LogFollower): Promise<{ written: number; stop(): void } | undefined> {
    const owner = await this.ownerOf(runId);
    if (owner === undefined) return undefined;
    const followId = randomBytes(8).toString('hex');
    const check = setInterval(() => void this.checkEnded(runId, followId), FOLLOW_CHECK_MS);
    check.unref();
    const stop = () => {
      clearInterval(check);
      if (!this.following.delete(followId)) return;
      this.cluster.publish('engine.unfollow', { followId }, { to: owner });
    };
    this.following.set(followId, (event) => {
      if (event.kind === 'end') stop();
      listener(event);
    });
    const answer = await this.cluster
      .request<{ written: number } | null>(owner, 'engine.follow', { runId, followId })
      .catch((error: Error) => {
        clearInterval(check);
        this.following.delete(followId);
        throw error;
      });
    if (answer === null) {
      clearInterval(check);
      this.following.delete(followId);
      return undefined;
    }
    return { written: answer.written, stop };
  }

  stop(): void {
    for (const off of this.offs.splice(0)) off();
    for (const stop of this.served.values()) stop();
    this.served.clear();
  }

  private async checkEnded(runId: string, followId: string): Promise<void> {
    const row = await this.store
      .get<{ status: RunStatus }>('SELECT status FROM runs WHERE id = ?', [runId])
      .catch((error: Error) => void this.logger.debug(`checking run ${runId} failed: ${error.message}`));
    if (row && row.status !== 'running') this.following.get(followId)?.({ kind: 'end', status: row.status });
  }
}
