/**
 * Remembers each fact for `ttlMs` after it was read. Concurrent callers of a fact being read share
 * one read (two tasks asking at once spawn one `df`, not two); a failed read is not remembered.
 */
export class FactCache {
  private readonly entries = new Map<string, { readAt?: number; value: Promise<unknown> }>();

  constructor(
    readonly ttlMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get<T>(key: string, read: () => Promise<T>): Promise<T> {
    const entry = this.entries.get(key);
    // The time to live counts from when a read finished: a slow read is not stale on arrival.
    if (entry && (entry.readAt === undefined || this.now() - entry.readAt < this.ttlMs)) {
      return entry.value as Promise<T>;
    }
    const value = read();
    const fresh: { readAt?: number; value: Promise<unknown> } = { value };
    this.entries.set(key, fresh);
    value.then(
      () => {
        fresh.readAt = this.now();
      },
      () => {
        if (this.entries.get(key) === fresh) this.entries.delete(key);
      },
    );
    return value;
  }
}
