import { realpathSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import {
  InvalidInputError,
  isLuaTable,
  luaType,
  type LuaCallContext,
  type LuaModuleImplementation,
  type LuaValue,
  type SshConnection,
  type SshExecResult,
  type SshProfiles,
} from '@runner/plugin-sdk';
import { withWorkflowProfile, workflowActor, type SshFunction } from './workflow-ssh.js';

/**
 * What the module asks for once its arguments are read, its local paths confined and dry-run
 * handled: done here with the profiles (the master's runtime, `runner run`), or forwarded to the
 * master from its local executor (forwarded-ssh.ts). Local paths are absolute by then.
 */
export interface SshActions {
  exec(call: LuaCallContext, profile: string, command: string, timeoutMs: number): Promise<SshExecResult>;
  upload(
    call: LuaCallContext,
    profile: string,
    local: string,
    remote: string,
    mode?: number,
  ): Promise<{ bytes: number }>;
  download(call: LuaCallContext, profile: string, remote: string, local: string): Promise<{ bytes: number }>;
}

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
 * its data directory, keys or store through this door; in the local executor the files are read
 * and written by the executor's user, and the same rule keeps a workflow to its working directory.
 */
export function confinedPath(fn: SshFunction, path: string, root: string): string {
  if (isAbsolute(path) || path.split(/[\\/]/).includes('..'))
    throw new InvalidInputError(
      `ssh.${fn}: local path ${path} must be relative to the working directory, without "..": workflow code copies only its own files, never the master's`,
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

/** upload's opts.mode: an octal string ("0644"), or none (0600). */
function modeOf(opts: LuaValue): number | undefined {
  const mode = isLuaTable(opts) ? opts.mode : undefined;
  if (mode === undefined || mode === null) return undefined;
  if (typeof mode !== 'string' || !/^0?[0-7]{3,4}$/.test(mode))
    throw new InvalidInputError(
      `ssh.upload: opts.mode must be an octal string such as "0644", got ${luaType(mode)} ${String(mode)}`,
    );
  return parseInt(mode, 8);
}

/** The actions done in this process, with the profiles: the master's runtime and `runner run`. */
export function profileActions(profiles: SshProfiles): SshActions {
  const connect = <T>(fn: SshFunction, call: LuaCallContext, name: string, work: (c: SshConnection) => Promise<T>) =>
    withWorkflowProfile(profiles, fn, name, workflowActor(call.run), call.signal, work);
  return {
    exec: (call, name, command, timeoutMs) =>
      connect('exec', call, name, (c) => c.exec(command, { timeoutMs, signal: call.signal })),
    upload: (call, name, local, remote, mode) =>
      connect('upload', call, name, (c) => c.upload(local, remote, { mode })),
    download: (call, name, remote, local) => connect('download', call, name, (c) => c.download(remote, local)),
  };
}

/** The `ssh` module over `actions`. `root` is the directory local paths are confined to. */
export function createSshModule(
  actions: SshActions,
  root: () => string = () => process.cwd(),
): LuaModuleImplementation<SshFunction> {
  return {
    async exec(call, name, cmd, opts) {
      const command = text('exec', 2, cmd, 'cmd');
      const timeout = isLuaTable(opts) && typeof opts.timeout === 'number' ? opts.timeout : 600;
      if (call.dryRun) {
        call.logger.info(`dry-run: would run on SSH profile ${String(name)}: ${command}`);
        return { changed: false, code: 0, stdout: '', stderr: '' };
      }
      const result = await actions.exec(call, text('exec', 1, name, 'profile'), command, timeout * 1000);
      return { changed: true, code: result.code, stdout: result.stdout, stderr: result.stderr };
    },
    async upload(call, name, local, remote, opts) {
      const source = confinedPath('upload', text('upload', 2, local, 'local'), root());
      const target = text('upload', 3, remote, 'remote');
      const mode = modeOf(opts);
      if (call.dryRun) {
        call.logger.info(`dry-run: would upload ${String(local)} to ${target} on SSH profile ${String(name)}`);
        return { changed: false, bytes: 0 };
      }
      const { bytes } = await actions.upload(call, text('upload', 1, name, 'profile'), source, target, mode);
      return { changed: true, bytes };
    },
    async download(call, name, remote, local) {
      const source = text('download', 2, remote, 'remote');
      const target = confinedPath('download', text('download', 3, local, 'local'), root());
      if (call.dryRun) {
        call.logger.info(`dry-run: would download ${source} from SSH profile ${String(name)} to ${String(local)}`);
        return { changed: false, bytes: 0 };
      }
      const { bytes } = await actions.download(call, text('download', 1, name, 'profile'), source, target);
      return { changed: true, bytes };
    },
  };
}
