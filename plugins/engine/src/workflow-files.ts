import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import {
  ForbiddenError,
  InvalidInputError,
  messageOf,
  PayloadTooLargeError,
  type ConfigDeclaration,
  type RunnerConfig,
} from '@runner/plugin-sdk';

/** A workflow is text a person wrote: anything larger is a mistake (or /dev/zero's cousin). */
export const MAX_WORKFLOW_BYTES = 4 * 1024 * 1024;

export const WORKFLOW_DIRS_KEY = 'engine.workflow_dirs';

export const WORKFLOW_FILES_CONFIG: ConfigDeclaration = {
  [WORKFLOW_DIRS_KEY]: {
    schema: { type: 'array', items: { type: 'string' } },
    default: ['workflows'],
    help: 'directories the `file` field of POST /workflows/run may read from (relative ones are under the data directory); `runner run --file` on this machine is not limited',
  },
};

/** The configured workflow directories as absolute paths (relative entries under the data dir). */
export function workflowDirs(config: RunnerConfig): string[] {
  return config.get<string[]>(WORKFLOW_DIRS_KEY).map((dir) => resolve(config.dataDir, dir));
}

const inside = (dir: string, path: string) => {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
};

function outside(file: string, dirs: string[]): ForbiddenError {
  // Says which setting decides, never anything read from the file.
  return new ForbiddenError(
    `workflow file ${file} is outside the workflow directories (${WORKFLOW_DIRS_KEY}: ${dirs.join(', ') || 'none'}); put it in one of them, set ${WORKFLOW_DIRS_KEY}, or send the workflow as content`,
  );
}

/**
 * The path to read: with `within`, a relative path is taken under the first directory and the
 * path must stay under one of them before and after symlinks are resolved (a link pointing out is
 * refused like the file it points to). An outside path is refused whether or not it exists, so the
 * answer tells nothing about files out there.
 */
async function checkedPath(file: string, within: string[] | undefined): Promise<string> {
  if (within === undefined) return file;
  const path = isAbsolute(file) || within.length === 0 ? resolve(file) : resolve(within[0] as string, file);
  if (!within.some((dir) => inside(dir, path))) throw outside(file, within);
  let real: string;
  try {
    real = await realpath(path);
  } catch (error) {
    throw readError(file, error);
  }
  const realDirs = await Promise.all(within.map((dir) => realpath(dir).catch(() => dir)));
  if (!realDirs.some((dir) => inside(dir, real))) throw outside(file, within);
  return real;
}

/** Whether the master would read this file itself (it lies under its workflow directories). */
export async function inWorkflowDirs(file: string, dirs: string[]): Promise<boolean> {
  try {
    await checkedPath(resolve(file), dirs);
    return true;
  } catch {
    return false;
  }
}

function readError(file: string, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException).code;
  // Bad input of the request (HTTP 400, exit code 2), not a missing resource: a 404 from
  // POST /workflows/run would read as "no such endpoint".
  if (code === 'ENOENT') return new InvalidInputError(`workflow file ${file} does not exist`, { field: 'file' });
  if (code === 'EISDIR') return new InvalidInputError(`workflow file ${file} is a directory`, { field: 'file' });
  return new InvalidInputError(`cannot read workflow file ${file}: ${messageOf(error)}`, { field: 'file' });
}

/**
 * Reads a workflow file. The file is opened without blocking and checked on the open handle
 * (no swap between check and read): only regular files of at most MAX_WORKFLOW_BYTES are read, so
 * /dev/zero, a FIFO or a socket is refused before a byte is read.
 */
export async function readWorkflowFile(file: string, within?: string[]): Promise<string> {
  const path = await checkedPath(file, within);
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw readError(file, error);
  }
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) throw readError(file, Object.assign(new Error('directory'), { code: 'EISDIR' }));
    if (!stat.isFile())
      throw new InvalidInputError(`workflow file ${file} is not a regular file (a device, FIFO or socket)`, {
        field: 'file',
      });
    if (stat.size > MAX_WORKFLOW_BYTES)
      throw new PayloadTooLargeError(
        `workflow file ${file} is ${stat.size} bytes; a workflow file may have at most ${MAX_WORKFLOW_BYTES}`,
      );
    return await handle.readFile('utf8');
  } catch (error) {
    if (error instanceof InvalidInputError || error instanceof PayloadTooLargeError) throw error;
    throw readError(file, error);
  } finally {
    await handle.close();
  }
}
