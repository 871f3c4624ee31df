// How a command of the CLI finds and calls the master's REST API. Shared by every plugin whose
// commands talk to a master (runner run, runner agent ...), so that all of them look in the same
// places in the same order and fail with the same words.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CommandContext } from './commands.js';
import { InvalidInputError, RunnerError } from './errors.js';

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
}

/** `<dataDir>/master.json`, written by the HTTP plugin of a running master. */
interface MasterFile {
  pid?: number;
  http?: string;
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
export function masterBaseUrl(address: string): string {
  const colon = address.lastIndexOf(':');
  let host = address.slice(0, colon);
  const port = address.slice(colon + 1);
  // A wildcard bind address is not something to connect to; loopback reaches the same server.
  if (host === '0.0.0.0' || host === '') host = '127.0.0.1';
  if (host === '::' || host === '[::]') host = '[::1]';
  if (host.includes(':') && !host.startsWith('[')) host = `[${host}]`;
  return `http://${host}:${port}`;
}

function endpointFromUrl(raw: string, source: string): MasterEndpoint {
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
  return { base: `${url.origin}${path}`, source, authorization, local: false };
}

/**
 * Finds the master's REST API: `--master-url`, else config `master.url` (`RUNNER_MASTER_URL`),
 * else the local master's `<dataDir>/master.json`, else config `master.address`
 * (`RUNNER_MASTER_ADDR`, the gRPC address agents dial), which the master is asked about. Returns
 * undefined, with the reasons, when none is known, so that callers can say where they looked.
 */
export async function findMaster(
  ctx: CommandContext,
  flag?: unknown,
): Promise<{ endpoint: MasterEndpoint } | { endpoint: undefined; lookedAt: string[] }> {
  if (typeof flag === 'string' && flag !== '') return { endpoint: endpointFromUrl(flag, '--master-url') };
  const configured = ctx.config.find('master.url');
  if (typeof configured === 'string' && configured !== '') {
    return { endpoint: endpointFromUrl(configured, `master.url (from ${ctx.config.sourceOf('master.url')})`) };
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

async function localMaster(dataDir: string, lookedAt: string[]): Promise<MasterEndpoint | undefined> {
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
  return { base: masterBaseUrl(info.http), source: `${path} (pid ${info.pid})`, local: true };
}

/**
 * `RUNNER_MASTER_ADDR` names the master by its gRPC address; its REST API is on another port,
 * which the master tells over gRPC (Master.Describe). TLS as for an agent: config
 * `master.tls_cert` (`RUNNER_MASTER_TLS_CERT`), else `agent.master_tls_cert`.
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
  const certFile = [ctx.config.find('master.tls_cert'), ctx.config.find('agent.master_tls_cert')].find(
    (v): v is string => typeof v === 'string' && v !== '',
  );
  let rootCert: Buffer | undefined;
  if (certFile) {
    try {
      rootCert = await readFile(certFile);
    } catch (error) {
      throw new InvalidInputError(`master TLS certificate ${certFile}: ${(error as Error).message}`, {
        field: 'master.tls_cert',
      });
    }
  }
  // Loaded on use: the proto and grpc-js are heavy, and most commands never need them.
  const { describeMaster } = await import('@runner/proto');
  let described: { http_port: number; http_bind_address: string };
  try {
    described = await describeMaster(target, { tls: rootCert ? { rootCert } : undefined });
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
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${described.http_port}`;
  return { base, source: `${source}, REST API on port ${described.http_port}`, local: false };
}

/** Like findMaster, but a missing master is an error that says where the CLI looked. */
export async function requireMaster(ctx: CommandContext, flag: unknown): Promise<MasterEndpoint> {
  const found = await findMaster(ctx, flag);
  if (found.endpoint) return found.endpoint;
  throw new RunnerError(
    'master_unreachable',
    `no master found: ${found.lookedAt.join('; ')}. Start one with \`runner server\`, or point at one with --master-url http://host:8080`,
    { status: 503 },
  );
}

/** Calls `<base>/api/v1<path>`; a failure names the URL, and an API error keeps its code and status. */
export async function callMaster<T>(
  endpoint: MasterEndpoint,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  options: { body?: unknown; timeoutMs?: number } = {},
): Promise<T> {
  const url = `${endpoint.base}/api/v1${path}`;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (endpoint.authorization) headers.authorization = endpoint.authorization;
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason =
      (error as Error).name === 'TimeoutError'
        ? 'no answer in time'
        : (cause?.code ?? cause?.message ?? (error as Error).message);
    throw new RunnerError(
      'master_unreachable',
      `cannot reach the master at ${url} (from ${endpoint.source}): ${reason}`,
      {
        status: 503,
        cause: error,
      },
    );
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const shaped = parsed as { error?: { code?: string; message?: string; field?: string } } | undefined;
    const message = shaped?.error?.message ?? (text.trim().slice(0, 200) || response.statusText);
    throw new RunnerError(shaped?.error?.code ?? 'master_error', `${message} (${method} ${url}: ${response.status})`, {
      status: response.status,
      details: shaped?.error?.field ? { field: shaped.error.field } : undefined,
    });
  }
  return parsed as T;
}
