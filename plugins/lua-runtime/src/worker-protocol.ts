import {
  InvalidInputError,
  LuaError,
  LuaTimeoutError,
  RunnerError,
  userKeyed,
  type LogFields,
} from '@runner/plugin-sdk';
import type { LuaCallContext, LuaModuleSpec } from '@runner/plugin-sdk';
import type { MessagePort } from 'node:worker_threads';
import { describeJsError } from './host.js';

/*
 * The messages between the main thread and a Lua worker (worker-entry.ts), and how values and
 * errors cross. Values are structured-cloned; what cloning cannot carry is replaced by markers:
 * a Lua function by the id of its handle in the worker, a JavaScript function (a module may return
 * one) by an id on the main thread, a lazy table by a slot the worker reads entries of on demand.
 */

/** Options of one run, as the worker receives them (functions and sinks replaced by flags). */
export interface WorkerRunOptions {
  chunkName: string;
  globals: unknown;
  dryRun: boolean;
  timeoutMs?: number;
  memoryLimitBytes?: number;
  cwd?: string;
  /** Absent with `sameEnv`: the env of the worker's previous run. */
  env?: Readonly<Record<string, string | undefined>>;
  sameEnv?: boolean;
  stdin?: Uint8Array;
  stdoutSink: boolean;
  stderrSink: boolean;
  run?: LuaCallContext['run'];
}

export type ToWorker =
  /** `modules`: the specs to install stubs for, when they changed since the worker's last run. */
  | { type: 'run'; id: number; source: string; options: WorkerRunOptions; modules?: LuaModuleSpec[] }
  | { type: 'abort'; id: number; error: EncodedError }
  /** The answer to a module or JavaScript-function call the worker made. */
  | { type: 'reply'; callId: number; ok: boolean; value?: unknown; error?: EncodedError }
  /** Calls a Lua function handle of run `id` (a module's LuaFunctionRef.call). */
  | { type: 'call-lua'; id: number; callId: number; fnId: number; args: unknown[] };

export type FromWorker =
  | { type: 'ready' }
  | { type: 'done'; id: number; ok: boolean; values?: unknown[]; error?: EncodedError }
  | { type: 'log'; id: number; level: 'debug' | 'info' | 'warn' | 'error'; message: string; fields?: LogFields }
  | { type: 'output'; id: number; stream: 'stdout' | 'stderr'; text: string }
  /**
   * Calls a module function (`module`, `fn`) or a JavaScript function the main thread gave (`jsFn`);
   * answered on the sync port: the outcome, or `pending` and a `reply` message later.
   */
  | { type: 'call'; id: number; callId: number; module?: string; fn?: string; jsFn?: number; args: unknown[] }
  /** The call's script stopped waiting (ended, stopped): abort the call's signal. */
  | { type: 'call-abort'; callId: number; error: EncodedError }
  | { type: 'reply-lua'; callId: number; ok: boolean; values?: unknown[]; error?: EncodedError }
  /** Reads a lazy table's entry (or its keys, when `key` is null); answered on the sync port. */
  | { type: 'lazy'; id: number; slot: number; key: string | null };

/** What the worker is started with. */
export interface WorkerData {
  /** The SharedArrayBuffer the worker waits on for lazy-table answers. */
  lazySignal: SharedArrayBuffer;
  lazyPort: MessagePort;
  /** Stop a script once the worker's heap and buffers hold this many bytes. */
  memoryLimitBytes: number;
  sliceMs?: number;
  hookInstructions?: number;
}

export const LUA_FN = '\u0000luaFn';
export const JS_FN = '\u0000jsFn';
export const LAZY = '\u0000lazy';

export interface Encoders {
  /** A Lua function handle (LuaFunctionRef) as a marker id; throw when it cannot cross. */
  luaFunction?(ref: object): number;
  jsFunction?(fn: (...args: any[]) => unknown): number;
  lazyTable?(source: Readonly<Record<string, unknown>>): number;
}

export interface Decoders {
  luaFunction?(id: number): unknown;
  jsFunction?(id: number): unknown;
  lazyTable?(slot: number): unknown;
}

/**
 * A copy of `value` that structured cloning can carry: plain data as it is (cycles kept, so the
 * receiver reports them as it would have), handles and functions as markers.
 */
export function encodeValue(value: unknown, enc: Encoders, seen = new Map<object, unknown>()): unknown {
  if (typeof value === 'function') {
    if (enc.jsFunction === undefined) throw new TypeError('a JavaScript function cannot cross to the Lua worker');
    return { [JS_FN]: enc.jsFunction(value as (...args: any[]) => unknown) };
  }
  if (typeof value !== 'object' || value === null) return value;
  if (value instanceof Uint8Array || value instanceof Date) return value;
  const done = seen.get(value);
  if (done !== undefined) return done;
  const kind = (value as { kind?: unknown }).kind;
  if (kind === 'lua-function' && enc.luaFunction !== undefined) return { [LUA_FN]: enc.luaFunction(value) };
  if (kind === 'lua-lazy-table' && enc.lazyTable !== undefined) {
    return { [LAZY]: enc.lazyTable((value as { source: Record<string, unknown> }).source) };
  }
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    seen.set(value, out);
    for (let i = 0; i < value.length; i++) out[i] = encodeValue(value[i], enc, seen);
    return out;
  }
  const out = userKeyed<unknown>();
  seen.set(value, out);
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
  for (const [key, item] of entries) out[String(key)] = encodeValue(item, enc, seen);
  return out;
}

/** The inverse of encodeValue, in place (the value is the receiver's own clone). */
export function decodeValue(value: unknown, dec: Decoders, seen = new Set<object>()): unknown {
  if (typeof value !== 'object' || value === null || value instanceof Uint8Array || value instanceof Date) return value;
  if (seen.has(value)) return value;
  seen.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = decodeValue(value[i], dec, seen);
    return value;
  }
  const record = value as Record<string, unknown>;
  if (typeof record[LUA_FN] === 'number' && dec.luaFunction) return dec.luaFunction(record[LUA_FN]);
  if (typeof record[JS_FN] === 'number' && dec.jsFunction) return dec.jsFunction(record[JS_FN]);
  if (typeof record[LAZY] === 'number' && dec.lazyTable) return dec.lazyTable(record[LAZY]);
  for (const key of Object.keys(record)) record[key] = decodeValue(record[key], dec, seen);
  return record;
}

export interface EncodedError {
  name: string;
  message: string;
  code?: string;
  status?: number;
  details?: Record<string, unknown>;
  /** The main thread's call whose failure caused this error: the main thread gives it back as `cause`. */
  causeCall?: number;
}

/** Marks an error a call to the main thread failed with, so that a script's error can name its cause. */
export const CALL_ID = Symbol('runner.luaWorkerCall');

export function encodeError(error: unknown): EncodedError {
  try {
    return encodeReadable(error);
  } catch {
    // An error whose message (or toString) throws: reading it in a message handler would end the
    // process; the script gets what inline gives it.
    return { name: 'Error', message: describeJsError(error) };
  }
}

function encodeReadable(error: unknown): EncodedError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const encoded: EncodedError = { name: error.name, message: error.message };
  if (error instanceof RunnerError) {
    encoded.code = error.code;
    encoded.status = error.status;
    if (error.details !== undefined) encoded.details = cloneable(error.details);
  }
  const callId = (error.cause as { [CALL_ID]?: number } | undefined)?.[CALL_ID];
  if (typeof callId === 'number') encoded.causeCall = callId;
  return encoded;
}

/** The error on this side: the SDK's classes rebuilt, so callers can still test `instanceof` and `code`. */
export function decodeError(encoded: EncodedError, cause?: unknown): Error {
  const options = { details: encoded.details, cause };
  switch (encoded.name) {
    case 'LuaError':
      return new LuaError(encoded.message, options);
    case 'LuaTimeoutError':
      return new LuaTimeoutError(encoded.message, options);
    case 'InvalidInputError':
      return new InvalidInputError(encoded.message, options);
  }
  if (encoded.code !== undefined) {
    const error = new RunnerError(encoded.code, encoded.message, { ...options, status: encoded.status });
    error.name = encoded.name;
    return error;
  }
  const error = new Error(encoded.message, cause === undefined ? undefined : { cause });
  error.name = encoded.name;
  return error;
}

/** Details may hold what cloning refuses (a function in a value): such entries become their text. */
function cloneable(details: Record<string, unknown>): Record<string, unknown> {
  try {
    return structuredClone(details);
  } catch {
    return Object.fromEntries(
      Object.entries(details).map(([k, v]) => {
        try {
          return [k, structuredClone(v)];
        } catch {
          return [k, String(v)];
        }
      }),
    );
  }
}
