// What the several-masters files share: masters on one PostgreSQL store, requests to one of them
// with its local credential, and polling with a ceiling.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FAST_AGENTS, localAuth, spawnRunner, tempDataDir, waitForOutput } from './helpers.js';

export interface ClusterMaster {
  name: string;
  dataDir: string;
  /** `http://127.0.0.1:<port>/api/v1` */
  base: string;
  /** `127.0.0.1:<port>` of its agents' gRPC. */
  grpc: string;
  child: ReturnType<typeof spawnRunner>;
}

export interface ClusterMasterOptions {
  /** Where its processes are kept, to be stopped after the file. */
  children: ReturnType<typeof spawnRunner>[];
  /** The data directory (a new one by default; a restarted master is given its old one). */
  dataDir?: string;
  /** The session key every master shares (a session from one is good on all). */
  jwtSecret?: string;
  env?: Record<string, string>;
}

/**
 * A master silent 6 s is dead (the default is 15 s, heartbeats every 3 s): the files that kill one
 * wait out the lease, and 15 s of it was most of their time. 6 s is still six heartbeats, far above
 * a live master's pause on a busy machine (a survivor that declared a live one dead would fail
 * these files loudly: that master says it was declared dead and stops).
 */
export const FAST_CLUSTER = {
  RUNNER_CLUSTER_LEASE_TIMEOUT: '6',
  RUNNER_CLUSTER_HEARTBEAT_INTERVAL: '1',
};

/** `runner server` on free loopback ports with its store on `url`. */
export async function startClusterMaster(
  name: string,
  url: string,
  options: ClusterMasterOptions,
): Promise<ClusterMaster> {
  const dataDir = options.dataDir ?? tempDataDir(`ha-${name}-`);
  if (options.jwtSecret !== undefined) {
    writeFileSync(join(dataDir, 'config.yaml'), `auth:\n  jwt:\n    secret: ${options.jwtSecret}\n`, { mode: 0o600 });
  }
  const child = spawnRunner(['server', '--http-port', '0', '--bind-address', '127.0.0.1', '--port', '0'], {
    env: { RUNNER_DATA_DIR: dataDir, RUNNER_STORE_URL: url, ...FAST_AGENTS, ...FAST_CLUSTER, ...options.env },
  });
  options.children.push(child);
  const [, grpcPort] = await waitForOutput(child, /gRPC listening on 127\.0\.0\.1:(\d+)/, 90_000);
  const [, http] = await waitForOutput(child, /REST API listening on (127\.0\.0\.1:\d+)/, 90_000);
  return { name, dataDir, base: `http://${http}/api/v1`, grpc: `127.0.0.1:${grpcPort}`, child };
}

/** One request to `master` as its local admin; the body parsed (null when not JSON). */
export async function callMaster<T = unknown>(
  master: Pick<ClusterMaster, 'base' | 'dataDir'>,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${master.base}${path}`, {
    method,
    headers: { ...localAuth(master.dataDir), 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json().catch(() => null)) as T };
}

/** Polls until `check` holds, every 250 ms, within a ceiling far above the need. */
export async function until<T>(
  what: string,
  read: () => Promise<T>,
  check: (value: T) => boolean,
  ceilingMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + ceilingMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${ceilingMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
