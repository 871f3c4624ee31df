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
   * replaced by `***` at any depth, and every registered secret value masked wherever it
   * appears, also inside longer strings and object keys. Returns `value` itself when nothing
   * needed masking, so callers can compare by identity.
   */
  redact<T>(value: T): T;
  /**
   * `text` with every registered secret value masked, also in the forms a script may print it in:
   * JSON-escaped, URL-encoded (`%2F` and `%2f`, spaces as `%20` or `+`), and base64 (standard and
   * URL-safe, at each of the three byte alignments, so the value is found inside a longer base64
   * text, less the one or two characters it shares with its neighbours).
   */
  redactText(text: string): string;
  /**
   * A masker for text that arrives in pieces (a command's output, a stream of chunks): each call
   * returns what can be let out masked, holding back the end of the text that may be the start of
   * a secret completed by the next piece; `end()` returns the rest. Forms split across two pieces
   * are masked as if the text had come whole.
   */
  streamMasker(): { write(piece: string): string; end(): string };
  /**
   * Registers a secret value (the secrets plugin, credentials, `secret` config keys). Values
   * shorter than 4 characters are ignored: they would mask ordinary words wherever they appear.
   * Registering twice counts twice. Returns a function that forgets this registration.
   */
  addSecret(value: string): () => void;
  /** True when a field of this name is masked whatever its value. */
  isSecretKey(key: string): boolean;
  /** True when at least one secret value is registered (callers may skip work otherwise). */
  hasSecrets(): boolean;
  /**
   * A number that changes whenever a secret is registered or forgotten: text masked while it had
   * one value may be reused (not masked again) while it keeps that value.
   */
  generation(): number;
}

export const RedactorRef = createServiceRef<Redactor>({
  id: 'kernel.redactor',
  description: 'masks secret values and secret-named fields in everything that leaves the process',
});

/** What a masked value or masked part of a string is replaced with. */
export const REDACTED = '***';
/** Registered values shorter than this are ignored (see `addSecret`). */
export const MIN_SECRET_LENGTH = 4;
// Deeper structures are cut rather than walked: redaction must terminate on cyclic or hostile input.
const MAX_DEPTH = 32;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The spellings of a value masked wherever they appear: itself, JSON-escaped, URL-encoded, and
 * base64 at each byte alignment (the characters that depend on the value's bytes alone, so the
 * value is found inside a longer base64 text), standard and URL-safe. Shorter spellings than
 * MIN_SECRET_LENGTH are left out: they would mask ordinary text.
 */
export function formsOf(value: string): string[] {
  const forms = new Set<string>([value, JSON.stringify(value).slice(1, -1)]);
  const url = encodeURIComponent(value);
  forms.add(url);
  forms.add(url.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()));
  forms.add(url.replace(/%20/g, '+'));
  const bytes = Buffer.from(value, 'utf8');
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    // Characters of whole 6-bit groups inside the value's bits: the neighbours' bits change the rest.
    const core = encoded.slice(Math.ceil((8 * shift) / 6), Math.floor((8 * (shift + bytes.length)) / 6));
    forms.add(core);
    forms.add(core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return [...forms].filter((form) => form.length >= MIN_SECRET_LENGTH);
}

/**
 * Creates the redactor. The kernel makes one per process (the test kernel one per test kernel).
 *
 * Text: one regular expression over every registered form answers "is anything here?" in a
 * single native scan, so text without secrets costs one scan and no allocation (and nothing at
 * all while no secret is registered). Only text that matches is masked, and then as the union of
 * every occurrence of every secret: with `abcd` and `cdef` registered, `xabcdefx` becomes
 * `x***x`, where a leftmost-match replace would leave `ef` (part of the second secret).
 *
 * Values: objects and arrays are walked to any depth (cut at 32 levels and on cycles); they are
 * copied only along paths where something was masked.
 */
export function createRedactor(): Redactor {
  // Registration counts per registered value, and the forms searched for (a value and its
  // JSON-escaped spelling, which is how it appears in a serialised log line or body).
  const counts = new Map<string, number>();
  let forms: string[] = [];
  let detector: RegExp | undefined;
  let generation = 0;

  const rebuild = () => {
    generation++;
    const all = new Set<string>();
    for (const value of counts.keys()) for (const form of formsOf(value)) all.add(form);
    forms = [...all].sort((a, b) => b.length - a.length);
    detector = forms.length === 0 ? undefined : new RegExp(forms.map(escapeRegExp).join('|'));
  };

  const mask = (text: string): string => {
    // Every occurrence of every form, overlapping ones included, merged into disjoint ranges.
    const ranges: [number, number][] = [];
    for (const form of forms) {
      for (let at = text.indexOf(form); at >= 0; at = text.indexOf(form, at + 1)) ranges.push([at, at + form.length]);
    }
    ranges.sort((a, b) => a[0] - b[0]);
    let out = '';
    let cursor = 0;
    for (let i = 0; i < ranges.length;) {
      const start = ranges[i][0];
      let end = ranges[i][1];
      // Overlapping or touching occurrences become one mask.
      for (i++; i < ranges.length && ranges[i][0] <= end; i++) end = Math.max(end, ranges[i][1]);
      out += text.slice(cursor, start) + REDACTED;
      cursor = end;
    }
    return out + text.slice(cursor);
  };

  const redactText = (text: string): string => {
    if (detector === undefined || text.length < MIN_SECRET_LENGTH || !detector.test(text)) return text;
    return mask(text);
  };

  const walk = (value: unknown, depth: number, seen: Set<object>): unknown => {
    if (typeof value === 'string') return detector === undefined ? value : redactText(value);
    if (value === null || typeof value !== 'object') return value;
    if (depth > MAX_DEPTH || seen.has(value)) return REDACTED;
    if (value instanceof Uint8Array || value instanceof Date) return value;
    seen.add(value);
    try {
      if (Array.isArray(value)) {
        let copy: unknown[] | undefined;
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          const next = walk(item, depth + 1, seen);
          if (next !== item) (copy ??= [...value])[i] = next;
        }
        return copy ?? value;
      }
      if (value instanceof Error) return redactError(value, depth, seen);
      let copy: Record<string, unknown> | undefined;
      for (const key of Object.keys(value)) {
        const item = (value as Record<string, unknown>)[key];
        const next = isSecretField(key) && item !== undefined && item !== null ? REDACTED : walk(item, depth + 1, seen);
        const safeKey = detector === undefined ? key : redactText(key);
        if (safeKey !== key) {
          copy ??= { ...(value as Record<string, unknown>) };
          delete copy[key];
          copy[safeKey] = next;
        } else if (next !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = next;
      }
      return copy ?? value;
    } finally {
      seen.delete(value);
    }
  };

  // An Error's message and stack are not own enumerable fields: redact them explicitly, keeping
  // the prototype (a RunnerError stays one) and own fields such as `code` and `details`.
  const redactError = (error: Error, depth: number, seen: Set<object>): Error => {
    const message = redactText(error.message);
    const stack = error.stack === undefined ? undefined : redactText(error.stack);
    const fields: Record<string, unknown> = {};
    let changed = message !== error.message || stack !== error.stack;
    for (const key of Object.keys(error)) {
      const item = (error as unknown as Record<string, unknown>)[key];
      const next = isSecretField(key) && item !== undefined && item !== null ? REDACTED : walk(item, depth + 1, seen);
      fields[key] = next;
      if (next !== item) changed = true;
    }
    if (!changed) return error;
    const copy = Object.create(Object.getPrototypeOf(error) as object) as Error;
    Object.defineProperty(copy, 'message', { value: message, writable: true, configurable: true });
    if (stack !== undefined) Object.defineProperty(copy, 'stack', { value: stack, writable: true, configurable: true });
    if (error.cause !== undefined)
      Object.defineProperty(copy, 'cause', {
        value: walk(error.cause, depth + 1, seen),
        writable: true,
        configurable: true,
      });
    return Object.assign(copy, fields);
  };

  const streamMasker = () => {
    let held = '';
    return {
      write(piece: string): string {
        const text = held + piece;
        if (detector === undefined) {
          held = '';
          return text;
        }
        const masked = redactText(text);
        // Keep back what could still grow into a form: up to the longest form less one character,
        // taken from the masked text's end (a mask itself is never held, nor anything before it).
        const keep = Math.min(forms[0].length - 1, masked.length);
        const lastMask = masked.lastIndexOf(REDACTED);
        const from = Math.max(masked.length - keep, lastMask < 0 ? 0 : lastMask + REDACTED.length);
        held = masked === text ? text.slice(from) : masked.slice(from);
        return masked.slice(0, from);
      },
      end(): string {
        const rest = redactText(held);
        held = '';
        return rest;
      },
    };
  };

  return {
    streamMasker,
    redact: <T>(value: T): T => {
      // Strings and primitives are the common case on the hot path: no Set for them.
      if (value === null || typeof value !== 'object') return walk(value, 0, undefined as never) as T;
      return walk(value, 0, new Set()) as T;
    },
    redactText,
    isSecretKey: isSecretField,
    hasSecrets: () => detector !== undefined,
    generation: () => generation,
    addSecret(value: string) {
      if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH) return () => {};
      counts.set(value, (counts.get(value) ?? 0) + 1);
      rebuild();
      let removed = false;
      return () => {
        if (removed) return;
        removed = true;
        const count = (counts.get(value) ?? 1) - 1;
        if (count <= 0) counts.delete(value);
        else counts.set(value, count);
        rebuild();
      };
    },
  };
}
