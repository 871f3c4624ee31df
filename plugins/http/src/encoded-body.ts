import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EncodedJson, Redactor } from '@runner/plugin-sdk';

/** What the router keeps with an EncodedJson: its masked bytes and their ETag. */
export interface EncodedBody {
  bytes: Buffer;
  /** Strong ETag (quoted) of `bytes`. */
  etag: string;
}

interface Kept extends EncodedBody {
  /** The redactor's generation the bytes were masked under. */
  generation: number;
}

/**
 * The bytes of pre-encoded JSON answers (EncodedJson), kept with the object the handler returned:
 * masked, encoded to UTF-8 and hashed once, then sent as they are while the handler keeps
 * returning the same object and no secret was registered or forgotten. A WeakMap, so an object
 * the handler dropped (a page invalidated by a write) takes its bytes with it.
 */
export class EncodedBodies {
  private readonly kept = new WeakMap<EncodedJson, Kept>();

  constructor(private readonly redactor?: Redactor) {}

  of(body: EncodedJson): EncodedBody {
    const generation = this.redactor?.generation() ?? 0;
    const hit = this.kept.get(body);
    if (hit !== undefined && hit.generation === generation) return hit;
    const text = this.redactor ? this.redactor.redactText(body.text) : body.text;
    const bytes = Buffer.from(text, 'utf8');
    // The hash of what is sent (masked): an ETag must change when the bytes do, even by a mask.
    const etag = `"${createHash('sha1').update(bytes).digest('base64url')}"`;
    const kept: Kept = { bytes, etag, generation };
    this.kept.set(body, kept);
    return kept;
  }
}

export function isEncodedJson(value: unknown): value is EncodedJson {
  return typeof value === 'object' && value !== null && (value as Partial<EncodedJson>).kind === 'encoded-json';
}

/**
 * True when an `If-None-Match` header names `etag`: `*`, or one entry of its list compared
 * weakly (RFC 9110 section 13.1.2: `W/"x"` matches `"x"` for this header).
 */
export function ifNoneMatch(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.trim() === '*') return true;
  for (const entry of value.split(',')) {
    const tag = entry.trim();
    if ((tag.startsWith('W/') ? tag.slice(2) : tag) === etag) return true;
  }
  return false;
}

/**
 * Sends a pre-encoded body's kept bytes, with its ETag and revalidation asked of caches (the data
 * changes with every run); 304 without a body when a GET names that ETag in If-None-Match.
 */
export function writeEncoded(req: IncomingMessage, res: ServerResponse, status: number, body: EncodedBody): void {
  if (status === 200) {
    res.setHeader('etag', body.etag);
    res.setHeader('cache-control', 'private, no-cache');
    if ((req.method === 'GET' || req.method === 'HEAD') && ifNoneMatch(req.headers['if-none-match'], body.etag)) {
      res.writeHead(304);
      res.end();
      return;
    }
  }
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', body.bytes.length);
  res.writeHead(status);
  res.end(body.bytes);
}
