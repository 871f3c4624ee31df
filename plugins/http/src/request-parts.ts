// Small pieces of a request the router and the WebSocket hub both read.
import { randomUUID } from 'node:crypto';
import { parse as parseQueryString } from 'node:querystring';
import type { IncomingMessage } from 'node:http';
import type { HttpReply } from '@runner/plugin-sdk';

/** A client's own id is kept (it ties the CLI's logs to ours) when it cannot smuggle anything into a log line. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id: the client's `x-request-id` when it is safe to log, a new UUID otherwise. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
}

/** The path of a request URL without its query (which may carry tokens, so it is never logged). */
export function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const at = raw.indexOf('?');
  return at === -1 ? raw : raw.slice(0, at);
}

/** A parsed query with the first value of each repeated parameter, as the schemas expect. */
export function firstValues(query: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(query)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) out[key] = first;
  }
  return out;
}

/** Query strings whose parse is kept; a few distinct ones (a UI polling its lists) make most requests. */
const QUERIES_KEPT = 256;

/**
 * Parsed query strings by their text (`?status=succeeded`), as polka parses them (node:querystring):
 * the same strings come again and again, and parsing each anew showed in a cached list's cost. The
 * parsed objects are frozen and shared: readers copy what they keep (`firstValues` does).
 */
export class QueryStrings {
  private readonly kept = new Map<string, Readonly<Record<string, string | string[]>>>();

  /** `search` is the URL's part from its `?` on, or '' when it has none. */
  of(search: string): Readonly<Record<string, string | string[]>> {
    if (search.length <= 1) return EMPTY_QUERY;
    const hit = this.kept.get(search);
    if (hit !== undefined) return hit;
    const parsed = Object.freeze({ ...parseQueryString(search.slice(1)) }) as Readonly<
      Record<string, string | string[]>
    >;
    if (this.kept.size >= QUERIES_KEPT) this.kept.clear();
    this.kept.set(search, parsed);
    return parsed;
  }
}

const EMPTY_QUERY: Readonly<Record<string, string>> = Object.freeze({});

/** The part of a request URL from its `?` on ('' when it has none); `pathOf` is the part before. */
export function searchOf(url: string | undefined): string {
  const raw = url ?? '/';
  const at = raw.indexOf('?');
  return at === -1 ? '' : raw.slice(at);
}

/** True for a handler's HttpReply (`reply(status, body, headers)`). */
export function isReply(value: unknown): value is HttpReply {
  return typeof value === 'object' && value !== null && (value as Partial<HttpReply>).kind === 'http-reply';
}
