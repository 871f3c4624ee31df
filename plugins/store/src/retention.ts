import { setImmediate as yieldTurn } from 'node:timers/promises';
import type { Logger, RetentionPolicy, RetentionStats } from '@runner/plugin-sdk';

/** The first pass waits this long after start, so it does not compete with the boot. */
export const FIRST_PASS_DELAY_MS = 1_000;

interface Registered {
  policy: RetentionPolicy;
  lastPrunedAt: string | null;
  lastRemoved: number;
  lastError?: string;
}

/**
 * Runs the registered retention policies: one pass soon after start, then one every interval.
 * A pass prunes each policy batch by batch and yields to the event loop between batches, so
 * writes and requests interleave with a large backlog instead of waiting for all of it. Passes
 * never overlap; stopping ends the pass after its current batch.
 */
export class RetentionRunner {
  private readonly policies = new Set<Registered>();
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly logger: Logger) {}

  register(policy: RetentionPolicy): () => void {
    const entry: Registered = { policy, lastPrunedAt: null, lastRemoved: 0 };
    this.policies.add(entry);
    return () => void this.policies.delete(entry);
  }

  /** Starts the schedule (idempotent). Timers do not keep the process alive. */
  start(intervalMs: number): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = setInterval(() => void this.runPass(), intervalMs);
      this.timer.unref();
      void this.runPass();
    }, FIRST_PASS_DELAY_MS);
    this.timer.unref();
  }

  /** Prunes every policy now (or joins the pass under way); resolves when the pass ended. */
  runPass(now?: () => Date): Promise<void> {
    this.pass ??= this.prune(now ?? (() => new Date())).finally(() => (this.pass = undefined));
    return this.pass;
  }

  /** Stops the schedule and waits for the pass under way to end its current batch. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.timer);
    await this.pass;
  }

  async stats(now = new Date()): Promise<RetentionStats[]> {
    return Promise.all(
      [...this.policies].map(async ({ policy, lastPrunedAt, lastRemoved, lastError }) => {
        const [{ count, oldest }, due] = await Promise.all([policy.kept(), policy.due?.(now)]);
        return {
          name: policy.name,
          rule: policy.rule,
          kept: count,
          ...(oldest !== undefined ? { oldest } : {}),
          ...(due !== undefined ? { due } : {}),
          lastPrunedAt,
          lastRemoved,
          ...(lastError !== undefined ? { lastError } : {}),
        };
      }),
    );
  }

  private async prune(now: () => Date): Promise<void> {
    for (const entry of [...this.policies]) {
      let removed = 0;
      try {
        for (;;) {
          if (this.stopped) return;
          const batch = await entry.policy.pruneBatch(now());
          if (batch <= 0) break;
          removed += batch;
          await yieldTurn();
        }
        entry.lastError = undefined;
      } catch (error) {
        // The store stays as it was before the failed batch; the next pass tries again.
        entry.lastError = (error as Error).message;
        this.logger.warn(`retention of ${entry.policy.name} failed: ${entry.lastError}`);
      }
      entry.lastPrunedAt = now().toISOString();
      entry.lastRemoved = removed;
      if (removed > 0) this.logger.info(`retention removed ${removed} ${entry.policy.name}`, { removed });
    }
  }
}
