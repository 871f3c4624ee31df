import { realpathSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import {
  InvalidInputError,
  isLuaTable,
  luaType,
  RunnerError,
  type LuaCallContext,
  type LuaModuleImplementation,
  type LuaValue,
  type SshConnection,
} from '@runner/plugin-sdk';
import type { SshProfilesService } from './profiles.js';

type SshFunction = 'exec' | 'upload' | 'download';

function text(fn: SshFunction, position: number, value: LuaValue, what: string): string {
  if (typeof value !== 'string' || value === '')
    throw new InvalidInputError(
      `ssh.${fn}: argument ${position} (${what}) must be a non-empty string, got ${luaType(value)}`,
    );
  return value;
}

/**
 * A local path confined to `root`: relative, without `..`, and (once the existing part is
 * resolved) not leading out of it through a symlink. Workflow code on the master must not reach
 * its data directory, keys or store through this door.
 */
export function confinedPath(fn: SshFunction, path: string, root: string): string {
  if (isAbsolute(path) || path.split(/[\\/]/).includes('..'))
    throw new InvalidInputError(
      `ssh.${fn}: local path ${path} must be relative to the working directory, without "..": the module acts from the master, whose own files are not the workflow's`,
    );
  const realRoot = realpathSync(root);
  const full = resolve(realRoot, path);
  // The deepest part that exists, resolved: a symlink inside the working directory may not lead out.
  let existing = full;
  for (;;) {
    try {
      existing = realpathSync(existing);
      break;
    } catch {
      const parent = dirname(existing);
      if (parent === existing) break;
      existing = parent;
    }
  }
  const inside = relative(realRoot, existing);
  if (inside.startsWith(`..${sep}`) || inside === '..' || isAbsolute(inside))
    throw new InvalidInputError(`ssh.${fn}: local path ${path} leads out of the working directory (a symbolic link)`);
  return full;
}

/** Who acts, for the audit log: the run when there is one. */
const actorOf = (call: LuaCallContext) =>
  call.run ? `workflow:${call.run.workflow}/${call.run.runId}/${call.run.task}` : 'workflow:repl';

/** The `ssh` module over the profiles service. `root` is the directory local paths are confined to. */
export function createSshModule(
  profiles: SshProfilesService,
  root: () => string = () => process.cwd(),
): LuaModuleImplementation<SshFunction> {
  /** Connects for one call: the profile must allow workflows and have a pinned key (never trusted from a workflow). */
  async function withProfile<T>(
    fn: SshFunction,
    call: LuaCallContext,
    name: LuaValue,
    work: (c: SshConnection) => Promise<T>,
  ): Promise<T> {
    const profile = await profiles.get(text(fn, 1, name, 'profile'));
    if (!profile.workflows)
      throw new RunnerError(
        'forbidden',
        `ssh.${fn}: SSH profile ${profile.name} is not open to workflows (an admin allows it: runner ssh update ${profile.name} ... --workflows)`,
        { status: 403 },
      );
    const connection = await profiles.connect(profile.name, { actor: actorOf(call) });
    const abort = () => connection.close();
    call.signal.addEventListener('abort', abort, { once: true });
    try {
      return await work(connection);
    } finally {
      call.signal.removeEventListener('abort', abort);
      connection.close();
    }
  }

  return {
    async exec(call, name, cmd, opts) {
      const command = text('exec', 2, cmd, 'cmd');
      const timeout = isLuaTable(opts) && typeof opts.timeout === 'number' ? opts.timeout : 600;
      if (call.dryRun) {
        call.logger.info(`dry-run: would run on SSH profile ${String(name)}: ${command}`);
        return { changed: false, code: 0, stdout: '', stderr: '' };
      }
      const result = await withProfile('exec', call, name, (c) =>
        c.exec(command, { timeoutMs: timeout * 1000, signal: call.signal }),
      );
      return { changed: true, code: result.code, stdout: result.stdout, stderr: result.stderr };
    },
    async upload(call, name, local, remote, opts) {
      const source = confinedPath('upload', text('upload', 2, local, 'local'), root());
      const target = text('upload', 3, remote, 'remote');
      const mode = isLuaTable(opts) && typeof opts.mode === 'string' ? parseInt(opts.mode, 8) : undefined;
      if (call.dryRun) {
        call.logger.info(`dry-run: would upload ${String(local)} to ${target} on SSH profile ${String(name)}`);
        return { changed: false, bytes: 0 };
      }
      const { bytes } = await withProfile('upload', call, name, (c) => c.upload(source, target, { mode }));
      return { changed: true, bytes };
    },
    async download(call, name, remote, local) {
      const source = text('download', 2, remote, 'remote');
      const target = confinedPath('download', text('download', 3, local, 'local'), root());
      if (call.dryRun) {
        call.logger.info(`dry-run: would download ${source} from SSH profile ${String(name)} to ${String(local)}`);
        return { changed: false, bytes: 0 };
      }
      const { bytes } = await withProfile('download', call, name, (c) => c.download(source, target));
      return { changed: true, bytes };
    },
  };
}
