/** How an agent retries a lost or failed connection to its master (config `agent.reconnect_*` and `agent.circuit_breaker_*`). */
export interface ReconnectPolicy {
  /** Delay before the first retry. */
  initialDelayMs: number;
  /** Delays grow to at most this. */
  maxDelayMs: number;
  /** Each consecutive failure multiplies the delay by this. */
  multiplier: number;
  /** Each delay is randomised by up to this fraction either way (0.2: 80%-120%), so agents cut off together do not return together. */
  jitter: number;
  /** Consecutive failed attempts after which the agent gives up and exits; 0 never gives up. */
  maxRetries: number;
  /** Consecutive failures that open the circuit breaker. */
  breakerFailures: number;
  /** While open, no attempt is made for this long; then one attempt probes (half-open). */
  breakerResetMs: number;
}

export const DEFAULT_RECONNECT: ReconnectPolicy = Object.freeze({
  initialDelayMs: 1000,
  maxDelayMs: 60_000,
  multiplier: 2,
  jitter: 0.2,
  maxRetries: 0,
  breakerFailures: 10,
  breakerResetMs: 300_000,
});

export type NextAttempt =
  | { kind: 'retry'; delayMs: number; failures: number }
  | { kind: 'circuit-open'; delayMs: number; failures: number }
  | { kind: 'give-up'; failures: number };

/**
 * The reconnection state machine. `failed()` after an attempt that did not get registered,
 * `succeeded()` once registered; each answers what to do next. Exponential backoff with jitter
 * spaces attempts; after `breakerFailures` consecutive failures the breaker opens and attempts
 * stop for `breakerResetMs`, after which a single attempt probes the master: success closes the
 * breaker, failure opens it again. `maxRetries` (when not 0) bounds the whole series.
 */
export class Reconnector {
  private failures = 0;

  constructor(
    private readonly policy: ReconnectPolicy,
    private readonly random: () => number = Math.random,
  ) {}

  get consecutiveFailures(): number {
    return this.failures;
  }

  /** A session was established: the next loss starts a fresh series. */
  succeeded(): void {
    this.failures = 0;
  }

  /** Delay before the first attempt after a session that did work ended. */
  afterLoss(): { kind: 'retry'; delayMs: number; failures: number } {
    return { kind: 'retry', delayMs: this.jittered(this.policy.initialDelayMs), failures: 0 };
  }

  failed(): NextAttempt {
    this.failures++;
    const { policy } = this;
    if (policy.maxRetries > 0 && this.failures >= policy.maxRetries)
      return { kind: 'give-up', failures: this.failures };
    if (policy.breakerFailures > 0 && this.failures >= policy.breakerFailures) {
      return { kind: 'circuit-open', delayMs: policy.breakerResetMs, failures: this.failures };
    }
    const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.multiplier ** (this.failures - 1));
    return { kind: 'retry', delayMs: this.jittered(base), failures: this.failures };
  }

  private jittered(ms: number): number {
    const spread = Math.min(1, Math.max(0, this.policy.jitter));
    return Math.max(0, Math.round(ms * (1 - spread + 2 * spread * this.random())));
  }
}
