// The one way a CLI command finds and calls a master's REST API: `runner run` through a master,
// `runner agent ...`, `runner db ...`, `runner executions ...`. Every command looks in the same
// places in the same order, sends the same credentials, and fails with the same words.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CommandContext, CommandOption } from './commands.js';
import {
  ConflictError,
  ForbiddenError,
  InvalidInputError,
  NotFoundError,
  RunnerError,
  UnauthorizedError,
} from './errors.js';
import { credentialFor } from './master-credentials.js';
import {
  masterDispatcher,
  masterTlsOptions,
  tlsFailureReason,
  type MasterTlsOptions,
  type MasterTrust,
} from './master-tls.js';

/**
 * The `--master-url` option every command that talks to a master takes; pass its value
 * (`options.masterUrl`) to `connectMaster`.
 */
export const MASTER_URL_OPTION: Readonly<CommandOption> = Object.freeze({
  flags: '--master-url <url>',
  description:
    "the master's REST API, e.g. http://master:8080 (default: config master.url, RUNNER_MASTER_URL, else the local master, else master.address)",
});

/** A master's REST API as the CLI reaches it, and the words that say where it was found. */
export interface MasterEndpoint {
  /** `http://host:port` without a trailing slash. */
  base: string;
  /** Where the address came from: `--master-url`, `RUNNER_MASTER_URL`, a master.json path... */
  source: string;
  /** Basic credentials taken from the URL (fetch refuses URLs that carry them). */
  authorization?: string;
  /** The master holds this command's data directory: it is on this host and reads its files. */
  local: boolean;
  /** The master's process id, for a local master (from its master.json). */
  pid?: number;
  /** For an `https://` base: the certificate file trusted besides the system roots. */
  trust?: MasterTrust;
}

/**
 * Asks a master, by the gRPC address agents dial, where its REST API listens. Provided by the
 * agent transport plugin (`masterLocator` in its definition), so that the SDK needs no gRPC.
 */
export interface MasterLocator {
  describe(
    address: string,
    options: { rootCert?: Buffer; timeoutMs?: number },
  ): Promise<{ http_port: number; http_bind_address: string; http_tls?: boolean }>;
}

/** `<dataDir>/master.json`, written by the HTTP plugin of a running master. */
interface MasterFile {
  pid?: number;
  http?: string;
  /** Set when the REST API serves HTTPS: the absolute path of its certificate (`--tls-cert`). */
  tls_cert?: string;
}

/** Whether a process of this host runs with that pid (EPERM: it does, as another user). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** `host:port` as master.json writes it (a bind address), made a URL to dial: `http://host:port`. */
export function masterBaseUrl(address: string, scheme: 'http' | 'https' = 'http'): string {
  const colon = address.lastIndexOf(':');
  let host = address.slice(0, colon);
  const port = address.slice(colon + 1);
  // A wildcard bind address is not something to connect to; loopback reaches the same server.
  if (host === '0.0.0.0' || host === '') host = '127.0.0.1';
  if (host === '::' || host === '[::]') host = '[::1]';
  if (host.includes(':') && !host.startsWith('[')) host = `[${host}]`;
  return `${scheme}://${host}:${port}`;
}

/** The certificate file config names for the master (`--ca`, RUNNER_CA, master.tls_cert), if any. */
function configuredTrust(ctx: CommandContext): MasterTrust | undefined {
  const file = [ctx.config.find('master.tls_cert'), ctx.config.find('agent.master_tls_cert')].find(
    (v): v is string => typeof v === 'string' && v !== '',
  );
  if (file === undefined) return undefined;
  const key = ctx.config.find('master.tls_cert') === file ? 'master.tls_cert' : 'agent.master_tls_cert';
  return { file, source: `${key} (from ${ctx.config.sourceOf(key)})` };
}

function endpointFromUrl(raw: string, source: string, trust?: MasterTrust): MasterEndpoint {
  let url: URL;
  try {
    url = new URL(/^[a-z]+:\/\//i.test(raw) ? raw : `http://${raw}`);
  } catch {
    throw new InvalidInputError(`${source}: "${raw}" is not a URL such as http://master.example:8080`, {
      field: 'master-url',
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidInputError(`${source}: "${raw}" must be an http:// or https:// URL`, { field: 'master-url' });
  }
  const authorization =
    url.username || url.password
      ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
      : undefined;
  url.username = '';
  url.password = '';
  // A URL given with the API prefix works as well as one without.
  const path = url.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  const base = `${url.origin}${path}`;
  return { base, source, authorization, local: false, ...(url.protocol === 'https:' && trust ? { trust } : {}) };
}

/**
 * Finds the master's REST API: `--master-url`, else config `master.url` (`RUNNER_MASTER_URL`),
 * else the local master's `<dataDir>/master.json`, else config `master.address`
 * (`RUNNER_MASTER_ADDR`, the gRPC address agents dial), which the master is asked about through
 * `ctx.masterLocator`. Returns undefined, with the reasons, when none is known, so that callers
 * can say where they looked.
 */
export async function findMaster(
  ctx: CommandContext,
  flag?: unknown,
): Promise<{ endpoint: MasterEndpoint } | { endpoint: undefined; lookedAt: string[] }> {
  const trust = configuredTrust(ctx);
  if (typeof flag === 'string' && flag !== '') return { endpoint: endpointFromUrl(flag, '--master-url', trust) };
  const configured = ctx.config.find('master.url');
  if (typeof configured === 'string' && configured !== '') {
    return {
      endpoint: endpointFromUrl(configured, `master.url (from ${ctx.config.sourceOf('master.url')})`, trust),
    };
  }
  const lookedAt = ['--master-url not given', 'master.url not set (config file or RUNNER_MASTER_URL)'];
  const local = await localMaster(ctx.config.dataDir, lookedAt);
  if (local) return { endpoint: local };
  const address = ctx.config.find('master.address');
  if (typeof address === 'string' && address !== '') {
    return { endpoint: await endpointFromGrpcAddress(ctx, address) };
  }
  lookedAt.push('master.address not set (config file or RUNNER_MASTER_ADDR)');
  return { endpoint: undefined, lookedAt };
}

/**
 * The master that runs with this data directory, from its `master.json`, or undefined with the
 * reason added to `lookedAt` (missing, unreadable, or naming a process that is gone).
 */
export async function localMaster(dataDir: string, lookedAt: string[] = []): Promise<MasterEndpoint | undefined> {
  const path = join(dataDir, 'master.json');
  let info: MasterFile;
  try {
    info = JSON.parse(await readFile(path, 'utf8')) as MasterFile;
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    lookedAt.push(
      missing
        ? `${path} does not exist (no master runs with data directory ${dataDir})`
        : `${path} is not readable JSON: ${(error as Error).message}`,
    );
    return undefined;
  }
  if (typeof info.http !== 'string' || !info.http.includes(':')) {
    lookedAt.push(`${path} has no "http": "host:port" entry`);
    return undefined;
  }
  if (typeof info.pid === 'number' && !isProcessAlive(info.pid)) {
    lookedAt.push(`${path} names process ${info.pid}, which is not running (a master that did not stop cleanly)`);
    return undefined;
  }
  const source = `${path} (pid ${info.pid})`;
  if (typeof info.tls_cert === 'string' && info.tls_cert !== '') {
    const trust = { file: info.tls_cert, source: `${path}, the certificate it serves`, pin: true };
    return { base: masterBaseUrl(info.http, 'https'), source, local: true, pid: info.pid, trust };
  }
  return { base: masterBaseUrl(info.http), source, local: true, pid: info.pid };
}

/**
 * For commands that would open the data directory a running master holds (`runner ui`, `runner
 * repl`): a ConflictError saying where that master serves the web UI and what to do instead
 * (`instead`), rather than the bare "data directory in use"; undefined when no master runs on it.
 */
export async function besideLocalMaster(dataDir: string, instead: string): Promise<RunnerError | undefined> {
  const master = await localMaster(dataDir);
  if (!master) return undefined;
  return new ConflictError(
    `a master (pid ${master.pid}) already runs with data directory ${dataDir}: it serves the web UI at ${master.base}/ and the REST API at ${master.base}/api/v1; ${instead}`,
  );
}

/**
 * `RUNNER_MASTER_ADDR` names the master by its gRPC address; its REST API is on another port,
 * which the master tells over gRPC (Master.Describe, through the locator the agent transport
 * provides). TLS as for an agent: config `master.tls_cert` (`RUNNER_MASTER_TLS_CERT`), else
 * `agent.master_tls_cert`.
 */
async function endpointFromGrpcAddress(ctx: CommandContext, address: string): Promise<MasterEndpoint> {
  const source = `master.address (from ${ctx.config.sourceOf('master.address')})`;
  // As for `runner agent start --master`: the port may be left out, 50053 being the default.
  const target = /^[^:[\]]+$/.test(address) ? `${address}:50053` : address;
  const parts = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d+)$/.exec(target);
  if (!parts) {
    throw new InvalidInputError(
      `${source}: "${address}" is not host:port (the master's gRPC port, e.g. ci-master:50053)`,
      { field: 'master.address' },
    );
  }
  const host = parts[1] ?? parts[2];
  const locator = await ctx.masterLocator?.();
  if (!locator) {
    throw new RunnerError(
      'master_unreachable',
      `${source}: no plugin can ask a master by its gRPC address (the agent-transport plugin is not installed); set RUNNER_MASTER_URL instead`,
      { status: 503 },
    );
  }
  const trust = configuredTrust(ctx);
  let rootCert: Buffer | undefined;
  if (trust) {
    try {
      rootCert = await readFile(trust.file);
    } catch (error) {
      throw new InvalidInputError(`master TLS certificate ${trust.file}: ${(error as Error).message}`, {
        field: 'master.tls_cert',
      });
    }
  }
  let described: Awaited<ReturnType<MasterLocator['describe']>>;
  try {
    described = await locator.describe(target, { rootCert });
  } catch (error) {
    throw new RunnerError('master_unreachable', `${(error as Error).message} (from ${source})`, {
      status: 503,
      cause: error,
    });
  }
  if (described.http_port === 0) {
    throw new RunnerError('master_unreachable', `master ${address} (from ${source}) serves no REST API`, {
      status: 503,
    });
  }
  const loopbackOnly = /^(127\.|::1$|localhost$)/.test(described.http_bind_address);
  if (loopbackOnly && !/^(127\.|::1$|localhost$)/.test(host)) {
    throw new RunnerError(
      'master_unreachable',
      `master ${address} (from ${source}) serves its REST API on ${described.http_bind_address} only, which cannot be reached from here; start it with --bind-address 0.0.0.0, or set RUNNER_MASTER_URL`,
      { status: 503 },
    );
  }
  const scheme = described.http_tls === true ? 'https' : 'http';
  const base = `${scheme}://${host.includes(':') ? `[${host}]` : host}:${described.http_port}`;
  const where = `${source}, REST API on port ${described.http_port}`;
  return { base, source: where, local: false, ...(scheme === 'https' && trust ? { trust } : {}) };
}

/** Like findMaster, but a missing master is an error that says where the CLI looked. */
export async function requireMaster(ctx: CommandContext, flag?: unknown): Promise<MasterEndpoint> {
  const found = await findMaster(ctx, flag);
  if (found.endpoint) return found.endpoint;
  throw new RunnerError(
    'master_unreachable',
    `no master found: ${found.lookedAt.join('; ')}. Start one with \`runner server\`, or point at one with --master-url http://host:8080`,
    { status: 503 },
  );
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Options of one call to the master. */
export interface MasterCallOptions {
  /** Sent as JSON. */
  body?: unknown;
  /** Milliseconds before the call fails as unanswered (default 30 s; 0 for none, e.g. a stream). */
  timeoutMs?: number;
  /** Aborts the call (Ctrl-C). */
  signal?: AbortSignal;
  /** Extra request headers (e.g. `accept: text/event-stream`). */
  headers?: Record<string, string>;
}

/** A master's REST API with credentials, timeouts and error mapping. Paths are under `/api/v1`. */
export interface MasterClient {
  readonly endpoint: MasterEndpoint;
  /** A JSON call; resolves with the parsed answer (undefined for 204). */
  call<T>(method: Method, path: string, options?: MasterCallOptions): Promise<T>;
  /** The raw answer of a successful call, for streams (SSE) and downloads; errors are thrown as by `call`. */
  request(method: Method, path: string, options?: MasterCallOptions): Promise<Response>;
  /** A download as bytes (a backup image). */
  bytes(path: string, options?: MasterCallOptions): Promise<Uint8Array>;
  /**
   * Where `--follow` commands open the WebSocket, the headers (credentials) to send and, for a
   * `wss://` URL trusted through a certificate file, the TLS options to give the `ws` client.
   */
  webSocket(): Promise<{ url: string; headers: Record<string, string>; tls?: MasterTlsOptions }>;
}

/** Where the credentials for a call come from (see `credentialFor`). */
export interface MasterClientOptions {
  /** The CLI's data directory (its `auth/logins.json` and `auth/local.token`). */
  dataDir: string;
  /** The environment (`RUNNER_TOKEN`); default `process.env`. */
  env?: NodeJS.ProcessEnv;
}

/**
 * A client of the master at `endpoint`. Credentials, in order: those in the URL (Basic),
 * `RUNNER_TOKEN`, this master's entry in `<dataDir>/auth/logins.json` (`runner login`), and
 * `<dataDir>/auth/local.token` when the master is this data directory's own.
 */
export function createMasterClient(endpoint: MasterEndpoint, options: MasterClientOptions): MasterClient {
  let authorization: Promise<string | undefined> | undefined;
  const credentials = () =>
    (authorization ??= endpoint.authorization
      ? Promise.resolve(endpoint.authorization)
      : credentialFor(endpoint, options.dataDir, options.env ?? process.env));

  // Built once, on the first call to an https:// master trusted through a file.
  let dispatcher: Promise<object> | undefined;
  const tlsFetchOptions = async (): Promise<{ dispatcher?: object }> =>
    endpoint.trust && endpoint.base.startsWith('https:')
      ? { dispatcher: await (dispatcher ??= masterDispatcher(endpoint.trust)) }
      : {};

  const request = async (method: Method, path: string, call: MasterCallOptions = {}): Promise<Response> => {
    const url = `${endpoint.base}/api/v1${path}`;
    const headers: Record<string, string> = { accept: 'application/json', ...call.headers };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const auth = await credentials();
    if (auth) headers.authorization = auth;
    const tls = await tlsFetchOptions();
    const timeoutMs = call.timeoutMs ?? 30_000;
    const signals = [call.signal, timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined].filter(
      (s): s is AbortSignal => s !== undefined,
    );
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        signal: signals.length === 0 ? undefined : AbortSignal.any(signals),
        // Node's fetch takes undici's dispatcher option, which the DOM RequestInit type lacks.
        ...tls,
      } as RequestInit);
    } catch (error) {
      if (call.signal?.aborted) throw error;
      throw unreachable(error, url, endpoint, timeoutMs);
    }
    if (!response.ok) throw await apiError(response, method, url);
    return response;
  };

  return {
    endpoint,
    request,
    async call<T>(method: Method, path: string, call?: MasterCallOptions): Promise<T> {
      const text = await (await request(method, path, call)).text();
      if (text === '') return undefined as T;
      try {
        return JSON.parse(text) as T;
      } catch {
        throw new RunnerError('master_error', `${method} ${endpoint.base}/api/v1${path}: the answer is not JSON`, {
          status: 502,
        });
      }
    },
    async bytes(path: string, call?: MasterCallOptions): Promise<Uint8Array> {
      return new Uint8Array(await (await request('GET', path, call)).arrayBuffer());
    },
    async webSocket() {
      const url = `${endpoint.base.replace(/^http/, 'ws')}/api/v1/ws`;
      const auth = await credentials();
      const headers: Record<string, string> = auth ? { authorization: auth } : {};
      if (endpoint.trust && url.startsWith('wss:'))
        return { url, headers, tls: await masterTlsOptions(endpoint.trust) };
      return { url, headers };
    },
  };
}

/**
 * Finds the master (see `findMaster`) and returns a client for it; a missing master is an error
 * saying where the CLI looked. `flag` is the command's `--master-url`.
 */
export async function connectMaster(ctx: CommandContext, flag?: unknown): Promise<MasterClient> {
  return createMasterClient(await requireMaster(ctx, flag), { dataDir: ctx.config.dataDir });
}

/** A connection that failed: named with the URL and what to do. */
function unreachable(error: unknown, url: string, endpoint: MasterEndpoint, timeoutMs: number): RunnerError {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code;
  const reason =
    (error as Error).name === 'TimeoutError'
      ? `no answer within ${timeoutMs / 1000} s; is the master overloaded or the address wrong?`
      : code === 'ECONNREFUSED'
        ? 'connection refused; is `runner server` running there, on that port?'
        : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
          ? 'the host name does not resolve; check the address'
          : (tlsFailureReason(code, cause?.message, url, endpoint.trust) ??
            code ??
            cause?.message ??
            (error as Error).message);
  return new RunnerError(
    'master_unreachable',
    `cannot reach the master at ${url} (from ${endpoint.source}): ${reason}`,
    {
      status: 503,
      cause: error,
    },
  );
}

/**
 * The API's error body (`{error: {code, message, field?, details?}}`) back to a RunnerError of
 * the same kind (InvalidInputError for 400, NotFoundError for 404, ...) and code: the one place
 * where a master's answer becomes what a command prints and its exit code (2 for a 400, else 1;
 * kernel/src/cli/main.ts). The message is the master's own, without the request: `--debug` shows
 * the request and its status as the error's cause.
 */
async function apiError(response: Response, method: string, url: string): Promise<RunnerError> {
  const text = await response.text().catch(() => '');
  let shaped: { error?: { code?: string; message?: string; field?: string; details?: Record<string, unknown> } } = {};
  try {
    shaped = text === '' ? {} : (JSON.parse(text) as typeof shaped);
  } catch {
    // Not JSON (a proxy's page): the text itself says what happened.
  }
  const body = typeof shaped.error === 'object' && shaped.error !== null ? shaped.error : {};
  const message =
    body.message ?? `${text.trim().slice(0, 200) || response.statusText} (${method} ${url}: ${response.status})`;
  const cause = new Error(`${method} ${url}: ${response.status}`);
  const details = body.field ? { ...body.details, field: body.field } : body.details;
  const code = body.code ?? 'master_error';
  const kinds: Record<number, (m: string) => RunnerError> = {
    400: (m) => new InvalidInputError(m, { details, cause }),
    401: (m) => new UnauthorizedError(m, { cause }),
    403: (m) => new ForbiddenError(m, { cause }),
    404: (m) => new NotFoundError(m, { details, cause }),
    409: (m) => new ConflictError(m, { details, cause }),
  };
  const make = kinds[response.status];
  if (!make) return new RunnerError(code, message, { status: response.status, details, cause });
  const error = make(message);
  // The kind's class with the master's own code (`invalid_workflow` is a 400 too).
  Object.defineProperty(error, 'code', { value: code, enumerable: true });
  return error;
}
