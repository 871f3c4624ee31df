import { createMasterClient, localMaster, RunnerError, type MasterClient } from '@runner/plugin-sdk';
import type { LockInfo } from './lock.js';

/** Backups and vacuums of a large store take a while; the master answers when done. */
export const STORE_CALL_TIMEOUT_MS = 10 * 60_000;

/**
 * The REST API of the process that holds `dataDir`'s store lock, found through its master.json
 * (the SDK's master client: credentials, timeouts and error mapping as for every command).
 */
export async function lockHolderMaster(dataDir: string, holder: LockInfo): Promise<MasterClient> {
  const lookedAt: string[] = [];
  const endpoint = await localMaster(dataDir, lookedAt);
  if (!endpoint) {
    throw new RunnerError(
      'master_unreachable',
      `runner process ${holder.pid} holds ${dataDir} (lock ${holder.path}) but its REST API cannot be found: ` +
        `${lookedAt.join('; ')}; if it is a \`runner run\`, wait for it to finish`,
      { status: 503, details: { pid: holder.pid } },
    );
  }
  if (endpoint.pid !== holder.pid) {
    throw new RunnerError(
      'master_unreachable',
      `${endpoint.source} names process ${endpoint.pid}, but the lock ${holder.path} is held by process ${holder.pid}`,
      { status: 503, details: { pid: holder.pid } },
    );
  }
  return createMasterClient(endpoint, { dataDir });
}
