import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isLuaTable, type LuaModuleImplementation, type LuaValue } from '@runner/plugin-sdk';
import { change, options, optString, requireString } from '../host/args.js';
import { readText, writeText } from '../host/text-file.js';
import type { cronModule } from './spec.js';

const NAME = /^[A-Za-z0-9_-]+$/;
const MACROS = ['@reboot', '@hourly', '@daily', '@midnight', '@weekly', '@monthly', '@yearly', '@annually'];

export function checkSchedule(schedule: string): string {
  const fields = schedule.trim().split(/\s+/);
  if (fields.length === 1 && MACROS.includes(fields[0])) return fields[0];
  if (fields.length !== 5 || fields.some((f) => !/^[\d*/,\-A-Za-z?]+$/.test(f)))
    throw new Error(
      `cron: schedule "${schedule}" must have five fields (minute hour day month weekday) or be one of ${MACROS.join(', ')}`,
    );
  return fields.join(' ');
}

function nameOf(fn: string, value: LuaValue): string {
  const name = requireString(`cron.${fn}`, value, 1, 'an entry name');
  if (!NAME.test(name))
    throw new Error(`cron.${fn}: a name is letters, digits, '-' and '_' (cron skips other files): ${name}`);
  return name;
}

export function createCronModule(): LuaModuleImplementation<keyof typeof cronModule.functions> {
  return {
    async present(call, nameArg, scheduleArg, commandArg, optsArg) {
      const name = nameOf('present', nameArg);
      const schedule = checkSchedule(requireString('cron.present', scheduleArg, 2, 'a schedule'));
      const command = requireString('cron.present', commandArg, 3, 'a command');
      if (command.includes('\n')) throw new Error('cron.present: the command must be one line');
      const o = options('cron.present', optsArg, 4, ['user', 'dir', 'env'] as const);
      const user = optString('cron.present', 'user', o.user) ?? 'root';
      const env =
        isLuaTable(o.env) && !Array.isArray(o.env) ? Object.entries(o.env).map(([k, v]) => `${k}=${String(v)}`) : [];
      const path = join(optString('cron.present', 'dir', o.dir) ?? '/etc/cron.d', name);
      const text = ['# managed by runner (cron module)', ...env, `${schedule} ${user} ${command}`, ''].join('\n');
      return change(call, (await readText(path)) !== text, `write cron entry ${path}`, () => writeText(path, text), {
        path,
      });
    },
    async absent(call, nameArg, optsArg) {
      const name = nameOf('absent', nameArg);
      const path = join(
        optString('cron.absent', 'dir', options('cron.absent', optsArg, 2, ['dir'] as const).dir) ?? '/etc/cron.d',
        name,
      );
      const exists = (await readText(path)) !== '';
      return change(call, exists, `remove cron entry ${path}`, () => rm(path, { force: true }), { path });
    },
    async list(_call, optsArg) {
      const dir =
        optString('cron.list', 'dir', options('cron.list', optsArg, 1, ['dir'] as const).dir) ?? '/etc/cron.d';
      const entries: LuaValue[] = [];
      for (const name of (await readdir(dir).catch(() => [])).sort()) {
        if (!NAME.test(name)) continue;
        for (const line of (await readText(join(dir, name))).split('\n')) {
          const l = line.trim();
          if (!l || l.startsWith('#') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(l)) continue;
          const parts = l.split(/\s+/);
          const n = parts[0].startsWith('@') ? 1 : 5;
          entries.push({
            name,
            schedule: parts.slice(0, n).join(' '),
            user: parts[n],
            command: parts.slice(n + 1).join(' '),
          });
        }
      }
      return entries;
    },
  };
}
