import type { LuaCallContext, LuaModuleImplementation, LuaValue } from '@runner/plugin-sdk';
import { change, options, optBoolean, optString, requireString, stringList } from '../host/args.js';
import { haveProgram, mustRun, runCommand } from '../host/command.js';
import {
  actionCommand,
  detectManager,
  managerEnv,
  MANAGERS,
  parseQuery,
  queryCommand,
  refreshCommand,
  type Action,
  type Manager,
} from './managers.js';
import type { pkgModule } from './spec.js';

type Fn = keyof typeof pkgModule.functions;

const noop = async (): Promise<void> => undefined;

let detected: Promise<Manager | null> | undefined;

async function managerOf(fn: string, named: string | undefined): Promise<Manager> {
  if (named !== undefined) {
    if (!(MANAGERS as readonly string[]).includes(named))
      throw new Error(`pkg.${fn}: unknown manager "${named}" (known: ${MANAGERS.join(', ')})`);
    return named as Manager;
  }
  // The host's manager does not change while the process lives.
  const manager = await (detected ??= detectManager(haveProgram));
  if (!manager) throw new Error(`pkg.${fn}: no package manager found (looked for ${MANAGERS.join(', ')})`);
  return manager;
}

async function installedVersion(manager: Manager, name: string, signal: AbortSignal): Promise<string | null> {
  const argv = queryCommand(manager, name);
  const r = await runCommand(argv, { signal, env: managerEnv(manager) });
  if (r.code === 127) throw new Error(`pkg: ${argv[0]} is not installed, so ${manager} packages cannot be queried`);
  return parseQuery(manager, name, r.code, r.stdout);
}

async function versions(manager: Manager, names: string[], signal: AbortSignal): Promise<(string | null)[]> {
  const found: (string | null)[] = [];
  for (const name of names) found.push(await installedVersion(manager, name, signal));
  return found;
}

/** install, remove and update: what differs, then one command for all of it. */
function acting(fn: Exclude<Fn, 'query'>, action: Action, key: string) {
  return async (call: LuaCallContext, namesArg: LuaValue, optsArg: LuaValue) => {
    const names = stringList(`pkg.${fn}`, namesArg, 1);
    const o = options(`pkg.${fn}`, optsArg, 2, ['manager', 'refresh'] as const);
    const manager = await managerOf(fn, optString(`pkg.${fn}`, 'manager', o.manager));
    const env = managerEnv(manager);
    if (optBoolean(`pkg.${fn}`, 'refresh', o.refresh) && !call.dryRun)
      await mustRun(`pkg.${fn}`, refreshCommand(manager), { signal: call.signal, env });
    const before = await versions(manager, names, call.signal);
    // install acts on those missing; remove and update on those installed.
    const todo = names.filter((_, i) => (action === 'install' ? before[i] === null : before[i] !== null));
    if (action !== 'upgrade') {
      return change(
        call,
        todo.length > 0,
        `${action} ${todo.join(' ')} (${manager})`,
        async () => {
          await mustRun(`pkg.${fn}`, actionCommand(manager, action, todo), { signal: call.signal, env });
          return { [key]: todo };
        },
        { manager, [key]: call.dryRun ? todo : [] },
      );
    }
    // An upgrade may find nothing newer: it changed only what a version moved for.
    if (call.dryRun || todo.length === 0)
      return change(call, todo.length > 0, `upgrade ${todo.join(' ')} if newer versions exist (${manager})`, noop, {
        manager,
        [key]: [],
      });
    await mustRun(`pkg.${fn}`, actionCommand(manager, 'upgrade', todo), { signal: call.signal, env });
    const after = await versions(manager, todo, call.signal);
    const upgraded = todo.filter((name, i) => after[i] !== before[names.indexOf(name)]);
    if (upgraded.length > 0) call.logger.info(`upgraded ${upgraded.join(' ')} (${manager})`);
    return { changed: upgraded.length > 0, manager, [key]: upgraded };
  };
}

/** The installed version of a package with the host's manager, or null (infra_test reads it). */
export async function queryInstalled(name: string, signal: AbortSignal): Promise<string | null> {
  return installedVersion(await managerOf('query', undefined), name, signal);
}

export function createPkgModule(): LuaModuleImplementation<Fn> {
  return {
    install: acting('install', 'install', 'installed'),
    remove: acting('remove', 'remove', 'removed'),
    update: acting('update', 'upgrade', 'upgraded'),
    async query(call, nameArg, optsArg) {
      const name = requireString('pkg.query', nameArg, 1, 'a package name');
      const o = options('pkg.query', optsArg, 2, ['manager'] as const);
      const manager = await managerOf('query', optString('pkg.query', 'manager', o.manager));
      const version = await installedVersion(manager, name, call.signal);
      return version === null ? { installed: false, manager } : { installed: true, version, manager };
    },
  };
}
