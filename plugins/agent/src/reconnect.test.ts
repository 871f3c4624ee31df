import { describe, expect, it } from 'vitest';
import { Reconnector, type ReconnectPolicy } from './reconnect.js';

const policy = (overrides: Partial<ReconnectPolicy> = {}): ReconnectPolicy => ({
  initialDelayMs: 1000,
  maxDelayMs: 10_000,
  multiplier: 2,
  jitter: 0,
  maxRetries: 0,
  breakerFailures: 0,
  breakerResetMs: 60_000,
  ...overrides,
});

describe('reconnection policy', () => {
  it('backs off exponentially up to the maximum delay', () => {
    const r = new Reconnector(policy());
    const delays = Array.from({ length: 7 }, () => (r.failed() as { delayMs: number }).delayMs);
    expect(delays).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000, 10_000]);
  });

  it('randomises each delay within the jitter fraction', () => {
    expect((new Reconnector(policy({ jitter: 0.2 }), () => 0).failed() as { delayMs: number }).delayMs).toBe(800);
    expect((new Reconnector(policy({ jitter: 0.2 }), () => 1).failed() as { delayMs: number }).delayMs).toBe(1200);
    const spread = new Set(
      Array.from(
        { length: 50 },
        () => (new Reconnector(policy({ jitter: 0.5 })).failed() as { delayMs: number }).delayMs,
      ),
    );
    expect(spread.size).toBeGreaterThan(10);
    for (const d of spread) expect(d >= 500 && d <= 1500).toBe(true);
  });

  it('starts over after a session was established', () => {
    const r = new Reconnector(policy());
    r.failed();
    r.failed();
    r.succeeded();
    expect(r.consecutiveFailures).toBe(0);
    expect(r.afterLoss()).toEqual({ kind: 'retry', delayMs: 1000, failures: 0 });
    expect(r.failed()).toEqual({ kind: 'retry', delayMs: 1000, failures: 1 });
  });

  it('opens the circuit breaker after consecutive failures: no attempt for the reset time, then one probe at a time', () => {
    const r = new Reconnector(policy({ breakerFailures: 3 }));
    expect(r.failed().kind).toBe('retry');
    expect(r.failed().kind).toBe('retry');
    expect(r.failed()).toEqual({ kind: 'circuit-open', delayMs: 60_000, failures: 3 });
    // The half-open probe failed: open again.
    expect(r.failed()).toEqual({ kind: 'circuit-open', delayMs: 60_000, failures: 4 });
    r.succeeded();
    expect(r.failed().kind).toBe('retry');
  });

  it('gives up after the maximum retry count', () => {
    const r = new Reconnector(policy({ maxRetries: 3, breakerFailures: 2 }));
    expect(r.failed().kind).toBe('retry');
    expect(r.failed().kind).toBe('circuit-open');
    expect(r.failed()).toEqual({ kind: 'give-up', failures: 3 });
  });
});
