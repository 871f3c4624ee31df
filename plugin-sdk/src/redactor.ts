import { isSecretField } from './logger.js';
import { createServiceRef } from './service-ref.js';

/**
 * The one door out: every log line, run record, API answer, WebSocket/SSE message, event, error
 * message and agent log stream passes through it before it leaves the process or reaches disk.
 * The kernel creates it before any plugin (the logger needs it) and every plugin receives it as
 * `ctx.redactor` and through `RedactorRef`.
 */
export interface Redactor {
  /**
   * A copy of `value` with values under secret-looking keys (`password`, `token`, `secret`, ...)
   * replaced by `[redacted]` at any depth, and every registered secret value masked wherever it
   * appears, also inside longer strings. Returns `value` itself when nothing needed masking.
   */
  redact<T>(value: T): T;
  /** `text` with every registered secret value masked. */
  redactText(text: string): string;
  /** Registers a secret value (the secrets plugin, credentials). Returns a function that forgets it. */
  addSecret(value: string): () => void;
  /** True when a field of this name is masked whatever its value. */
  isSecretKey(key: string): boolean;
}

export const RedactorRef = createServiceRef<Redactor>({
  id: 'kernel.redactor',
  description: 'masks secret values and secret-named fields in everything that leaves the process',
});

const MASK = '[redacted]';
// Shorter values would mask ordinary words ("on", "1") wherever they appear.
const MIN_SECRET_LENGTH = 4;
// Deeper structures are cut rather than walked: redaction must terminate on cyclic or hostile input.
const MAX_DEPTH = 32;

/**
 * Creates the redactor. The kernel makes one per process (the test kernel one per test kernel). Secret values are kept in a set and matched with one regular
 * expression rebuilt when the set changes, longest first so a secret that contains another is
 * masked whole. Objects are copied only along paths where something was masked.
 */
export function createRedactor(): Redactor {
  const values = new Map<string, number>();
  let pattern: RegExp | undefined;

  const rebuild = () => {
    const list = [...values.keys()].sort((a, b) => b.length - a.length);
    pattern =
      list.length === 0
        ? undefined
        : new RegExp(list.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  };

  const redactText = (text: string): string => {
    if (pattern === undefined || text.length < MIN_SECRET_LENGTH) return text;
    pattern.lastIndex = 0;
    return pattern.test(text) ? text.replace(pattern, MASK) : text;
  };

  const walk = (value: unknown, depth: number, seen: Set<object>): unknown => {
    if (typeof value === 'string') return redactText(value);
    if (value === null || typeof value !== 'object') return value;
    if (depth > MAX_DEPTH || seen.has(value)) return MASK;
    if (value instanceof Uint8Array || value instanceof Date) return value;
    seen.add(value);
    try {
      if (Array.isArray(value)) {
        let copy: unknown[] | undefined;
        value.forEach((item, i) => {
          const next = walk(item, depth + 1, seen);
          if (next !== item) (copy ??= [...value])[i] = next;
        });
        return copy ?? value;
      }
      let copy: Record<string, unknown> | undefined;
      for (const [key, item] of Object.entries(value)) {
        const next = isSecretField(key) && item !== undefined && item !== null ? MASK : walk(item, depth + 1, seen);
        if (next !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = next;
      }
      if (value instanceof Error) {
        const message = redactText(value.message);
        if (message !== value.message) return Object.assign(new Error(message), copy ?? {});
      }
      return copy ?? value;
    } finally {
      seen.delete(value);
    }
  };

  return {
    redact: <T>(value: T): T => walk(value, 0, new Set()) as T,
    redactText,
    isSecretKey: isSecretField,
    addSecret(value: string) {
      if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH) return () => {};
      values.set(value, (values.get(value) ?? 0) + 1);
      rebuild();
      let removed = false;
      return () => {
        if (removed) return;
        removed = true;
        const count = (values.get(value) ?? 1) - 1;
        if (count <= 0) values.delete(value);
        else values.set(value, count);
        rebuild();
      };
    },
  };
}
