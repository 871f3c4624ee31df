import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LuaCallContext, LuaModuleImplementation, LuaValue } from '@runner/plugin-sdk';
import { change, options, optString, requireString } from '../host/args.js';
import { mustRun, runCommand } from '../host/command.js';
import type { systemdModule } from './spec.js';

type Fn = keyof typeof systemdModule.functions;

/** sd_booted(3): systemd is the running init when this directory exists. */
export const SYSTEMD_RUNNING_MARK = '/run/systemd/system';

function requireSystemd(fn: string): void {
  if (!existsSync(SYSTEMD_RUNNING_MARK))
    throw new Error(
      `systemd.${fn}: systemd is not running on this host (no ${SYSTEMD_RUNNING_MARK}; a container or another init), so units cannot be managed here`,
    );
}

/** `nginx` means `nginx.service`, as systemctl reads it. */
export function unitName(fn: string, value: LuaValue): string {
  const name = requireString(`systemd.${fn}`, value, 1, 'a unit name');
  if (name.includes('/')) throw new Error(`systemd.${fn}: a unit name has no '/': ${name}`);
  return /\.[a-z]+$/.test(name) ? name : `${name}.service`;
}

async function isActive(unit: string, signal: AbortSignal): Promise<boolean> {
  return (await runCommand(['systemctl', 'is-active', '--quiet', unit], { signal })).code === 0;
}

async function enabledState(unit: string, signal: AbortSignal): Promise<string> {
  return (await runCommand(['systemctl', 'is-enabled', unit], { signal })).stdout.trim() || 'unknown';
}

type Verb = 'start' | 'stop' | 'restart' | 'reload' | 'enable' | 'disable';

/** Whether the verb would change the unit's state. */
async function needed(verb: Verb, unit: string, signal: AbortSignal): Promise<boolean> {
  switch (verb) {
    case 'start':
      return !(await isActive(unit, signal));
    case 'stop':
      return isActive(unit, signal);
    case 'enable':
      return (await enabledState(unit, signal)) !== 'enabled';
    case 'disable':
      return (await enabledState(unit, signal)) === 'enabled';
    default:
      return true;
  }
}

function verbFunction(verb: Verb) {
  return async (call: LuaCallContext, unitArg: LuaValue) => {
    const unit = unitName(verb, unitArg);
    requireSystemd(verb);
    const todo = await needed(verb, unit, call.signal);
    return change(
      call,
      todo,
      `${verb} ${unit}`,
      async () => void (await mustRun(`systemd.${verb}`, ['systemctl', verb, unit], { signal: call.signal })),
      { unit },
    );
  };
}

async function installUnit(call: LuaCallContext, nameArg: LuaValue, contentArg: LuaValue, optsArg: LuaValue) {
  const name = unitName('install_unit', nameArg);
  if (typeof contentArg !== 'string')
    throw new Error('systemd.install_unit: argument 2 must be the unit file content (a string)');
  const dir =
    optString('systemd.install_unit', 'dir', options('systemd.install_unit', optsArg, 3, ['dir'] as const).dir) ??
    '/etc/systemd/system';
  const path = join(dir, name);
  const current = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  const running = existsSync(SYSTEMD_RUNNING_MARK);
  return change(
    call,
    current !== contentArg,
    `install ${path}`,
    async () => {
      await mkdir(dir, { recursive: true });
      const temp = `${path}.runner-${process.pid}`;
      await writeFile(temp, contentArg, { mode: 0o644 });
      await rename(temp, path);
      if (!running) {
        call.logger.warn(`systemd is not running here: ${path} written, daemon-reload skipped`);
        return { reloaded: false };
      }
      await mustRun('systemd.install_unit', ['systemctl', 'daemon-reload'], { signal: call.signal });
      return { reloaded: true };
    },
    { path, reloaded: false },
  );
}

export function createSystemdModule(): LuaModuleImplementation<Fn> {
  return {
    start: verbFunction('start'),
    stop: verbFunction('stop'),
    restart: verbFunction('restart'),
    reload: verbFunction('reload'),
    enable: verbFunction('enable'),
    disable: verbFunction('disable'),
    async status(call, unitArg) {
      const unit = unitName('status', unitArg);
      requireSystemd('status');
      const out = await mustRun(
        'systemd.status',
        ['systemctl', 'show', '--property=ActiveState,SubState,LoadState,MainPID', unit],
        { signal: call.signal },
      );
      const props = Object.fromEntries(
        out
          .trim()
          .split('\n')
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      return {
        unit,
        active: props.ActiveState === 'active',
        active_state: props.ActiveState ?? 'unknown',
        sub_state: props.SubState ?? 'unknown',
        load_state: props.LoadState ?? 'unknown',
        enabled: await enabledState(unit, call.signal),
        main_pid: Number(props.MainPID ?? 0),
      };
    },
    install_unit: installUnit,
    async journal(call, unitArg, optsArg) {
      const unit = unitName('journal', unitArg);
      requireSystemd('journal');
      const o = options('systemd.journal', optsArg, 2, ['lines', 'since'] as const);
      const lines = o.lines ?? 50;
      if (typeof lines !== 'number' || !Number.isInteger(lines) || lines < 1)
        throw new Error('systemd.journal: lines must be a positive integer');
      const since = optString('systemd.journal', 'since', o.since);
      const argv = [
        'journalctl',
        '--unit',
        unit,
        '--lines',
        String(lines),
        '--no-pager',
        '--output',
        'cat',
        ...(since ? ['--since', since] : []),
      ];
      const out = await mustRun('systemd.journal', argv, { signal: call.signal });
      return out.split('\n').filter((l) => l !== '');
    },
  };
}
