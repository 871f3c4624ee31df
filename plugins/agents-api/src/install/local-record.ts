import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * What `runner agent install` remembers on this machine, so that `runner agent update <name>`
 * needs no flags: where the agent lives and how to reach it. No secret is kept here (the join
 * token stays in the agent's own agent.env, mode 0600).
 */
export interface LocalInstallRecord {
  name: string;
  ssh: { host: string; port: number; user: string; key?: string };
  known_hosts?: string;
  node_path?: string;
  remote_dir: string;
  service: string;
  master: string;
  version: string;
  installed_at: string;
  updated_at: string;
}

export function recordPath(dataDir: string, name: string): string {
  return join(dataDir, 'agent-installs', `${name}.json`);
}

export async function readLocalRecord(dataDir: string, name: string): Promise<LocalInstallRecord | undefined> {
  try {
    return JSON.parse(await readFile(recordPath(dataDir, name), 'utf8')) as LocalInstallRecord;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

export async function writeLocalRecord(dataDir: string, record: LocalInstallRecord): Promise<string> {
  const path = recordPath(dataDir, record.name);
  await mkdir(join(dataDir, 'agent-installs'), { recursive: true, mode: 0o700 });
  await writeFile(`${path}.tmp`, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  await rename(`${path}.tmp`, path);
  return path;
}
