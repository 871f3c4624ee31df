/**
 * Answers of an agent's resource reads (metrics, processes, network, disks) kept for a while
 * (service.md section 8: metrics cache duration 5 s), so a dashboard polled by many clients costs
 * the agent one gRPC call per period. Concurrent misses share one call; failures are not kept.
 */
export class MetricsCache {
  private readonly entries = new Map<string, { expires: number; value: Promise<unknown> }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get<T>(agent: string, kind: string, load: () => Promise<T>): Promise<T> {
    const key = `${agent}\u0000${kind}`;
    const hit = this.entries.get(key);
    if (hit && hit.expires > this.now()) return hit.value as Promise<T>;
    const value = load();
    // Counted from the request, not the answer: a slow agent must not stretch the period.
    const entry = { expires: this.now() + this.ttlMs, value };
    if (this.ttlMs > 0) this.entries.set(key, entry);
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return value;
  }

  /** Forgets an agent's answers (removed, gone offline, restarted). */
  forget(agent: string): void {
    for (const key of this.entries.keys()) if (key.startsWith(`${agent}\u0000`)) this.entries.delete(key);
  }

  /** Drops expired entries; called now and then so that agents seen once do not accumulate. */
  sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) if (entry.expires <= now) this.entries.delete(key);
  }
}
