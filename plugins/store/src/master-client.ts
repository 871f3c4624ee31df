import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { masterBaseUrl, RunnerError } from '@runner/plugin-sdk';
import type { LockInfo } from './lock.js';

/** `<dataDir>/master.json`, written by the HTTP plugin of a running master. */
export interface MasterInfo {
  pid: number;
  http: string;
}

async function masterAddress(dataDir: string, holder: LockInfo): Promise<string> {
  const path = join(dataDir, 'master.json');
  let info: Partial<MasterInfo>;
  try {
    info = JSON.parse(await readFile(path, 'utf8')) as Partial<MasterInfo>;
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new RunnerError(
      'master_unreachable',
      `runner process ${holder.pid} holds ${dataDir} (lock ${holder.path}) but ${path} is ` +
        `${missing ? 'missing' : 'unreadable'}, so its REST API cannot be found; if it is a \`runner run\`, ` +
        `wait for it to finish`,
      { status: 503, details: { pid: holder.pid, path } },
    );
  }
  if (typeof info.http !== 'string' || !info.http.includes(':')) {
    throw new RunnerError('master_unreachable', `${path} has no "http": "host:port" entry`, { status: 503 });
  }
  if (info.pid !== holder.pid) {
    throw new RunnerError(
      'master_unreachable',
      `${path} names process ${info.pid}, but the lock ${holder.path} is held by process ${holder.pid}`,
      { status: 503, details: { pid: holder.pid, path } },
    );
  }
  return masterBaseUrl(info.http);
}

/** Calls the REST API of the master that holds `dataDir`, under `/api/v1`; throws its error answers. */
async function requestMaster(
  dataDir: string,
  holder: LockInfo,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<Response> {
  const url = `${await masterAddress(dataDir, holder)}/api/v1${path}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10 * 60_000),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new RunnerError(
      'master_unreachable',
      `cannot reach runner process ${holder.pid} at ${url}: ${cause?.code ?? cause?.message ?? (error as Error).message}`,
      { status: 503, cause: error },
    );
  }
  if (response.ok) return response;
  const text = await response.text();
  const shaped = parseJson(text) as
    { error?: { code?: string; message?: string } | string; message?: string } | undefined;
  const inner = typeof shaped?.error === 'object' ? shaped.error : undefined;
  const message = inner?.message ?? (typeof shaped?.error === 'string' ? shaped.error : shaped?.message) ?? text;
  throw new RunnerError(inner?.code ?? 'master_error', `${method} ${url} answered ${response.status}: ${message}`, {
    status: response.status,
  });
}

function parseJson(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A JSON call to the master's REST API (see requestMaster). */
export async function callMaster<T>(
  dataDir: string,
  holder: LockInfo,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<T> {
  const response = await requestMaster(dataDir, holder, method, path, body);
  return parseJson(await response.text()) as T;
}

/** A GET of a binary answer (a backup image) from the master's REST API. */
export async function fetchMasterBytes(dataDir: string, holder: LockInfo, path: string): Promise<Uint8Array> {
  const response = await requestMaster(dataDir, holder, 'GET', path);
  return new Uint8Array(await response.arrayBuffer());
}
