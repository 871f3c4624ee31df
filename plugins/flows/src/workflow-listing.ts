import { readdir } from 'node:fs/promises';
import { basename, extname, join, relative, resolve } from 'node:path';
import type { RunnerConfig } from '@runner/plugin-sdk';

/** The engine's setting (plugins/engine/src/workflow-files.ts): the directories POST /workflows/run reads. */
const WORKFLOW_DIRS_KEY = 'engine.workflow_dirs';
/** Bounds of the walk: a workflow directory is a few folders of files, not a disk. */
const MAX_DEPTH = 4;
const MAX_FILES = 2000;

export interface WorkflowFile {
  name: string;
  path: string;
}

/**
 * The `.yaml`/`.yml` files under the engine's workflow directories (relative ones under the data
 * directory, as the engine resolves them), named after the file as `runner run` names their runs.
 * A directory that does not exist lists nothing.
 */
export async function listWorkflowFiles(config: RunnerConfig): Promise<WorkflowFile[]> {
  let dirs: string[];
  try {
    dirs = config.get<string[]>(WORKFLOW_DIRS_KEY).map((dir) => resolve(config.dataDir, dir));
  } catch {
    return []; // no engine in this profile: no workflow directories
  }
  const files: WorkflowFile[] = [];
  const walk = async (root: string, dir: string, depth: number): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (files.length >= MAX_FILES || entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory() && depth < MAX_DEPTH) await walk(root, path, depth + 1);
      else if (entry.isFile() && /\.ya?ml$/i.test(entry.name))
        files.push({ name: basename(entry.name, extname(entry.name)), path: relative(root, path) });
    }
  };
  for (const dir of dirs) await walk(dir, dir, 0);
  return files;
}
