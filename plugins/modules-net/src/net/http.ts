import { InvalidInputError, type LuaCallContext, type LuaValue } from '@runner/plugin-sdk';
import { deadline, failure } from './abort.js';
import {
  describe,
  durationOption,
  headersOption,
  luaType,
  moveCredentials,
  readOptions,
  requireUrl,
  secondsSince,
  shownUrl,
} from './args.js';

/** Response bodies are held in memory and handed to Lua: larger ones are cut here (`truncated = true`). */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;
export const DEFAULT_HTTP_TIMEOUT_MS = 30_000;

interface RequestPlan {
  fn: string;
  method: 'GET' | 'POST';
  url: URL;
  headers: Headers;
  body?: string;
  timeoutMs: number;
}

/** `net.get(url [, {headers, timeout, query}])` */
export async function httpGet(call: LuaCallContext, urlArg: LuaValue, optsArg: LuaValue): Promise<LuaValue> {
  const fn = 'net.get';
  const url = requireUrl(fn, 1, urlArg);
  const opts = readOptions(fn, 2, optsArg, ['headers', 'timeout', 'query']);
  appendQuery(fn, url, opts.query);
  return send(call, {
    fn,
    method: 'GET',
    url,
    headers: headersOption(fn, opts.headers),
    timeoutMs: durationOption(fn, 'timeout', opts.timeout, DEFAULT_HTTP_TIMEOUT_MS),
  });
}

/** `net.post(url, body [, {headers, timeout, json}])` */
export async function httpPost(
  call: LuaCallContext,
  urlArg: LuaValue,
  bodyArg: LuaValue,
  optsArg: LuaValue,
): Promise<LuaValue> {
  const fn = 'net.post';
  const url = requireUrl(fn, 1, urlArg);
  const opts = readOptions(fn, 3, optsArg, ['headers', 'timeout', 'json']);
  if (opts.json !== undefined && opts.json !== null && typeof opts.json !== 'boolean') {
    throw new InvalidInputError(`${fn}: option json must be true or false, got ${describe(opts.json)}`);
  }
  const headers = headersOption(fn, opts.headers);
  const body = encodeBody(fn, bodyArg, opts.json as boolean | undefined | null, headers);
  const timeoutMs = durationOption(fn, 'timeout', opts.timeout, DEFAULT_HTTP_TIMEOUT_MS);
  const bytes = body === undefined ? 0 : Buffer.byteLength(body);
  if (call.dryRun) {
    // `ok` stays true so that a script checking `r.ok` follows its success path in a dry run.
    return {
      skipped: true,
      ok: true,
      note: `dry-run: would POST ${bytes} bytes (${headers.get('content-type') ?? 'no body'}) to ${shownUrl(url)}`,
    };
  }
  return send(call, { fn, method: 'POST', url, headers, body, timeoutMs });
}

function appendQuery(fn: string, url: URL, query: LuaValue): void {
  if (query === null || query === undefined) return;
  if (luaType(query) !== 'table' || Array.isArray(query)) {
    if (Array.isArray(query) && query.length === 0) return;
    throw new InvalidInputError(
      `${fn}: query must be a table of name = value, got ${Array.isArray(query) ? 'a list' : describe(query)}`,
    );
  }
  for (const [name, value] of Object.entries(query as Record<string, LuaValue>)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      url.searchParams.append(name, scalarText(fn, `query.${name}`, item));
    }
  }
}

function scalarText(fn: string, where: string, value: LuaValue): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new InvalidInputError(`${fn}: ${where} must be a string, number or boolean, got ${describe(value)}`);
}

/**
 * A table is JSON unless `json = false` (then a form); a string goes as it is unless `json = true`
 * (then a JSON string). A Content-Type the script set always wins over the one chosen here.
 */
function encodeBody(
  fn: string,
  body: LuaValue,
  json: boolean | undefined | null,
  headers: Headers,
): string | undefined {
  const type = luaType(body);
  if (type === 'nil') return undefined;
  if (type === 'function') throw new InvalidInputError(`${fn}: argument 2 (body) cannot be a function`);
  const setType = (value: string): void => {
    if (!headers.has('content-type')) headers.set('content-type', value);
  };
  if (json === true || (type === 'table' && json !== false)) {
    setType('application/json');
    return toJson(fn, body);
  }
  if (type === 'table') {
    setType('application/x-www-form-urlencoded');
    const form = new URLSearchParams();
    if (Array.isArray(body) && body.length > 0) {
      throw new InvalidInputError(`${fn}: a form body (json = false) must be a table of name = value, got a list`);
    }
    for (const [name, value] of Object.entries(body as Record<string, LuaValue>)) {
      for (const item of Array.isArray(value) ? value : [value])
        form.append(name, scalarText(fn, `body.${name}`, item));
    }
    return form.toString();
  }
  setType('text/plain; charset=utf-8');
  return String(body);
}

function toJson(fn: string, value: LuaValue): string {
  return JSON.stringify(value, (key, item: unknown) => {
    if (luaType(item) === 'function') {
      throw new InvalidInputError(`${fn}: the body holds a function${key ? ` at "${key}"` : ''}; JSON cannot carry it`);
    }
    // JSON.stringify would quietly write null for these.
    if (typeof item === 'number' && !Number.isFinite(item)) {
      throw new InvalidInputError(`${fn}: the body holds ${item}${key ? ` at "${key}"` : ''}; JSON cannot carry it`);
    }
    return item;
  });
}

async function send(call: LuaCallContext, plan: RequestPlan): Promise<LuaValue> {
  const target = `${plan.method} ${shownUrl(plan.url)}`;
  moveCredentials(plan.url, plan.headers);
  const started = performance.now();
  const limit = { deadline: deadline(call.signal, plan.timeoutMs), timeoutMs: plan.timeoutMs };
  let response: Response;
  let body: { bytes: Uint8Array; truncated: boolean };
  try {
    response = await fetch(plan.url, {
      method: plan.method,
      headers: plan.headers,
      body: plan.body,
      signal: limit.deadline.signal,
    });
    // The time limit covers the body as well: a server that trickles bytes is as stuck as a silent one.
    body = await readBounded(response, MAX_BODY_BYTES);
  } catch (error) {
    throw failure(plan.fn, target, error, call.signal, limit);
  }
  const duration = secondsSince(started);
  const contentType = response.headers.get('content-type') ?? '';
  const text = decode(body.bytes, contentType);
  const result: Record<string, LuaValue> = {
    status: response.status,
    status_text: response.statusText,
    ok: response.ok,
    headers: headerTable(response.headers),
    body: text,
    truncated: body.truncated,
    url: shownUrl(new URL(response.url || plan.url.href)),
    duration,
  };
  if (isJsonType(contentType) && !body.truncated && text.trim() !== '') {
    try {
      result.json = JSON.parse(text) as LuaValue;
    } catch (error) {
      result.json_error = (error as Error).message;
    }
  }
  call.logger.debug(`${plan.fn}: ${target} answered ${response.status}`, {
    status: response.status,
    duration,
    bytes: body.bytes.byteLength,
  });
  return result;
}

/** Reads at most `max` bytes of the body, then stops the transfer instead of draining the rest. */
async function readBounded(response: Response, max: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!response.body) return { bytes: new Uint8Array(0), truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (total + value.byteLength > max) {
      chunks.push(value.subarray(0, max - total));
      total = max;
      truncated = true;
      await reader.cancel();
      break;
    }
    chunks.push(value);
    total += value.byteLength;
  }
  return { bytes: Buffer.concat(chunks, total), truncated };
}

function decode(bytes: Uint8Array, contentType: string): string {
  const charset = /charset\s*=\s*"?([\w.:-]+)"?/i.exec(contentType)?.[1];
  if (charset) {
    try {
      return new TextDecoder(charset).decode(bytes);
    } catch {
      // An unknown charset label: UTF-8 is the best remaining guess.
    }
  }
  return new TextDecoder('utf-8').decode(bytes);
}

function isJsonType(contentType: string): boolean {
  const media = contentType.split(';')[0].trim().toLowerCase();
  return media === 'application/json' || media.endsWith('+json');
}

/** Lower-case names; repeated Set-Cookie lines are joined with newlines since commas occur inside them. */
function headerTable(headers: Headers): Record<string, string> {
  const table: Record<string, string> = {};
  for (const [name, value] of headers) {
    if (name !== 'set-cookie') table[name] = value;
  }
  const cookies = headers.getSetCookie();
  if (cookies.length > 0) table['set-cookie'] = cookies.join('\n');
  return table;
}
