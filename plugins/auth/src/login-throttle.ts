import { RunnerError } from '@runner/plugin-sdk';

interface Attempts {
  failures: number;
  /** Epoch ms before which the next attempt is refused without checking the password. */
  blockedUntil: number;
  lastAt: number;
}

const FORGET_AFTER_MS = 15 * 60_000;
const MAX_DELAY_MS = 5 * 60_000;
/** A user may fail this many times as often across all addresses as from one (guessing from many hosts). */
const USER_FACTOR = 4;

/**
 * Slows password guessing per user and address: after `threshold` failures each further attempt
 * must wait, 1 s doubling up to 5 minutes, and is answered 429 without hashing anything, so
 * thousands of failed logins from one address cost the master almost nothing and other users'
 * requests are not slowed. The same count applies to a user across all addresses (times four), so
 * guesses spread over many hosts are slowed too. No count is kept per address alone: users behind
 * one NAT or proxy share it, and an attacker among them spraying user names would lock all of them
 * out. A success clears the pair's count; counts are forgotten after 15 idle minutes.
 */
export class LoginThrottle {
  private readonly attempts = new Map<string, Attempts>();

  constructor(
    private readonly threshold: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Throws a 429 naming when to retry when this user or address must wait. */
  check(user: string, address: string): void {
    const now = this.now();
    const waits = [this.attempts.get(pairKey(user, address)), this.attempts.get(userKey(user))]
      .filter((a): a is Attempts => a !== undefined && a.blockedUntil > now)
      .map((a) => a.blockedUntil - now);
    if (waits.length === 0) return;
    const seconds = Math.ceil(Math.max(...waits) / 1000);
    throw new RunnerError('too_many_attempts', `too many failed logins; try again in ${seconds} s`, {
      status: 429,
      details: { retry_after_seconds: seconds },
    });
  }

  /**
   * Counts an attempt as failed before its password is checked, so that attempts sent in parallel
   * are held back too (they would all pass `check` before the first one failed); `succeeded`
   * takes the count back.
   */
  attempt(user: string, address: string): void {
    const now = this.now();
    this.bump(pairKey(user, address), this.threshold, now);
    this.bump(userKey(user), this.threshold * USER_FACTOR, now);
    if (this.attempts.size > 10_000) this.sweep(now);
  }

  succeeded(user: string, address: string): void {
    this.attempts.delete(pairKey(user, address));
    // The attempt counted against the user across addresses was this success: taken back.
    const entry = this.attempts.get(userKey(user));
    if (!entry) return;
    entry.failures -= 1;
    if (entry.failures < this.threshold * USER_FACTOR) entry.blockedUntil = 0;
  }

  private bump(key: string, threshold: number, now: number): void {
    const previous = this.attempts.get(key);
    const entry =
      previous && now - previous.lastAt < FORGET_AFTER_MS ? previous : { failures: 0, blockedUntil: 0, lastAt: now };
    entry.failures += 1;
    entry.lastAt = now;
    if (entry.failures >= threshold && entry.blockedUntil <= now) {
      entry.blockedUntil = now + Math.min(1000 * 2 ** (entry.failures - threshold), MAX_DELAY_MS);
    }
    this.attempts.set(key, entry);
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.attempts) {
      if (now - entry.lastAt >= FORGET_AFTER_MS && entry.blockedUntil <= now) this.attempts.delete(key);
    }
  }
}

const pairKey = (user: string, address: string) => `p\u0000${user}\u0000${address}`;
const userKey = (user: string) => `u\u0000${user}`;
