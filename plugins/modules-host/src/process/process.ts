import { readdir, readFile } from 'node:fs/promises';
import { constants } from 'node:os';
import type { LuaCallContext, LuaModuleImplementation, LuaValue } from '@runner/plugin-sdk';
import { change, options, optBoolean, optString } from '../host/args.js';
import type { processModule } from './spec.js';

export interface ProcessInfo {
  pid: number;
  ppid: number;
  name: string;
  cmdline: string;
  uid: number;
  state: string;
}

async function read(pid: number): Promise<ProcessInfo | null> {
  try {
    const [stat, cmdline, status] = await Promise.all([
      readFile(`/proc/${pid}/stat`, 'utf8'),
      readFile(`/proc/${pid}/cmdline`, 'utf8'),
      readFile(`/proc/${pid}/status`, 'utf8'),
    ]);
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read from the last ')'.
    const close = stat.lastIndexOf(')');
    const [state, ppid] = stat.slice(close + 2).split(' ');
    return {
      pid,
      ppid: Number(ppid),
      name: stat.slice(stat.indexOf('(') + 1, close),
      cmdline: cmdline.split('\0').filter(Boolean).join(' '),
      uid: Number(/^Uid:\s+(\d+)/m.exec(status)?.[1] ?? -1),
      state,
    };
  } catch {
    return null; // it ended meanwhile
  }
}

export async function processes(): Promise<ProcessInfo[]> {
  const pids = (await readdir('/proc')).filter((d) => /^\d+$/.test(d)).map(Number);
  return (await Promise.all(pids.map(read))).filter((p): p is ProcessInfo => p !== null);
}

async function matching(
  fn: string,
  value: LuaValue,
  optsArg: LuaValue,
  extra: readonly string[] = [],
): Promise<ProcessInfo[]> {
  const o = options(`process.${fn}`, optsArg, 2, ['full', ...extra]);
  const full = optBoolean(`process.${fn}`, 'full', o.full) ?? false;
  const all = await processes();
  if (typeof value === 'number') return all.filter((p) => p.pid === value);
  if (typeof value !== 'string' || value === '')
    throw new Error(`process.${fn}: argument 1 must be a process name or a pid`);
  // Never this process itself: a script looking for "node" means another one.
  return all.filter((p) => p.pid !== process.pid && (full ? p.cmdline.includes(value) : p.name === value));
}

export function createProcessModule(): LuaModuleImplementation<keyof typeof processModule.functions> {
  return {
    async list(_call, nameArg, optsArg) {
      const found =
        nameArg === undefined || nameArg === null ? await processes() : await matching('list', nameArg, optsArg);
      return found.map((p) => ({ ...p }));
    },
    running: async (_call, match, optsArg) => (await matching('running', match, optsArg)).length > 0,
    async kill(call: LuaCallContext, match, optsArg) {
      const signal =
        optString('process.kill', 'signal', options('process.kill', optsArg, 2, ['signal', 'full'] as const).signal) ??
        'SIGTERM';
      if (!(signal in constants.signals)) throw new Error(`process.kill: unknown signal ${signal}`);
      const pids = (await matching('kill', match, optsArg, ['signal'])).map((p) => p.pid);
      return change(
        call,
        pids.length > 0,
        `send ${signal} to ${pids.join(', ')}`,
        async () => {
          for (const pid of pids) {
            try {
              process.kill(pid, signal as NodeJS.Signals);
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
            }
          }
        },
        { pids },
      );
    },
  };
}
