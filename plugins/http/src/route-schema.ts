import { excerpt, InvalidInputError } from '@runner/plugin-sdk';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck, type ValueError } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';

/** Which part of the request a schema checks; named in the 400 so the client knows where to look. */
export type RequestPart = 'params' | 'query' | 'body';

/**
 * A compiled check of one part of a request. Compiled once when the route is added, so a request
 * pays for a generated function call, not a schema walk.
 */
export interface PartValidator {
  /** Returns the value to hand the handler (coerced and defaulted for params and query). */
  check(value: unknown): unknown;
}

/**
 * Params and query arrive as strings; they are converted to the schema's types (`?limit=5` to
 * 5, `?dry_run=true` to true) and given their defaults before the check. Bodies are JSON and are
 * checked as they are: a string where a number belongs is the client's mistake to hear about.
 */
export function compilePart(part: RequestPart, schema: TSchema): PartValidator {
  const compiled = TypeCompiler.Compile(schema);
  const coerce = part !== 'body';
  // Converting and defaulting clone the value (a few microseconds, a visible share of a cached
  // list's request): the result for the same strings is kept. Only flat results are kept, and each
  // request gets its own copy, so a handler that changes its query cannot change the next one's.
  const seen = new Map<string, Record<string, unknown>>();
  return {
    check(value: unknown): unknown {
      const key = coerce ? stringsKey(value) : undefined;
      const hit = key === undefined ? undefined : seen.get(key);
      if (hit !== undefined) return { ...hit };
      let candidate = value;
      if (coerce) candidate = Value.Default(schema, Value.Convert(schema, candidate));
      else if (candidate !== undefined) candidate = Value.Default(schema, candidate);
      if (!compiled.Check(candidate)) throw invalid(part, compiled, candidate);
      if (key !== undefined && isFlat(candidate)) {
        if (seen.size >= CHECKED_KEPT) seen.clear();
        seen.set(key, { ...candidate });
      }
      return candidate;
    },
  };
}

/** Distinct params or queries whose checked value is kept, per route part. */
const CHECKED_KEPT = 256;

/** A key for an object of strings (what params and queries arrive as); undefined for anything else. */
function stringsKey(value: unknown): string | undefined {
  if (!isObject(value)) return undefined;
  let key = '';
  for (const name in value) {
    const item = value[name];
    // \0 separates the parts of the key; one inside a name or value (%00) could make two queries
    // share a key, so such a query is never kept.
    if (typeof item !== 'string' || item.includes('\0') || name.includes('\0')) return undefined;
    key += `${name}\0${item}\0`;
  }
  return key;
}

function isFlat(value: unknown): value is Record<string, unknown> {
  if (!isObject(value)) return false;
  for (const name in value) {
    const item = value[name];
    if (typeof item === 'object' && item !== null) return false;
  }
  return true;
}

/** The first problem, as a 400 naming the field by its dotted path (`vars.region`, `limit`). */
function invalid(part: RequestPart, compiled: TypeCheck<TSchema>, value: unknown): InvalidInputError {
  if (part === 'body' && value === undefined) {
    return new InvalidInputError('a JSON body is required', { field: 'body' });
  }
  const first = deepest(compiled.Errors(value).First());
  if (!first) return new InvalidInputError(`invalid ${part}`, { field: part });
  const segments = first.path.split('/').filter(Boolean).map(unescapePointer);
  // An unexpected property is reported at the object's path by some checks; TypeBox names the key itself.
  const field = excerpt(segments.length > 0 ? segments.join('.') : part);
  const where = part === 'body' ? field : `${part === 'query' ? 'query parameter' : 'path parameter'} ${field}`;
  if (part === 'body' && segments.length === 0 && first.schema.type === 'object' && !isObject(first.value))
    return new InvalidInputError('the body must be a JSON object', { field });
  return new InvalidInputError(`${where}: ${describe(first)}`, { field });
}

/**
 * For a value matching no branch of a union (`command: string | string[]` given `["ls", 3]`),
 * the branch that got furthest names the field best (`command.1`, expected string).
 */
function deepest(error: ValueError | undefined): ValueError | undefined {
  if (!error || error.errors.length === 0) return error;
  let best = error;
  for (const branch of error.errors) {
    const candidate = deepest(branch.First());
    if (candidate && candidate.path.length > best.path.length) best = candidate;
  }
  return best;
}

/** TypeBox's message, said the way the rest of the API says things, with the allowed values where a schema lists them. */
function describe(error: ValueError): string {
  const { message, value, schema } = error;
  // TypeBox says "Expected required property" for a missing key.
  if (value === undefined && /required property/i.test(message)) return 'is required';
  if (/unexpected property/i.test(message)) {
    const known = Object.keys((schema.properties ?? {}) as object);
    return known.length > 0 ? `is not a known field (known: ${known.join(', ')})` : 'is not a known field';
  }
  const choices = Array.isArray(schema.anyOf) ? (schema.anyOf as { const?: unknown }[]) : [];
  if (choices.length > 0 && choices.every((c) => c.const !== undefined)) {
    return `must be one of ${choices.map((c) => String(c.const)).join(', ')}, got ${excerpt(JSON.stringify(value) ?? '')}`;
  }
  if (schema.type === 'string' && schema.minLength === 1 && value === '') return 'must not be empty';
  return message.charAt(0).toLowerCase() + message.slice(1);
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
