import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LuaModuleImplementation, LuaValue } from '@runner/plugin-sdk';
import { change, options, optBoolean, optString, requireString } from '../host/args.js';
import { readText, writeText } from '../host/text-file.js';
import type { sysctlModule } from './spec.js';

function keyOf(fn: string, value: LuaValue): string {
  const key = requireString(`sysctl.${fn}`, value, 1, 'a key');
  if (!/^[a-z0-9_.-]+$/i.test(key) || key.includes('..')) throw new Error(`sysctl.${fn}: not a sysctl key: ${key}`);
  return key;
}

const procPath = (key: string) => join('/proc/sys', ...key.split('.'));
const normal = (value: string) => value.trim().split(/\s+/).join(' ');

async function running(fn: string, key: string): Promise<string> {
  try {
    return normal(await readFile(procPath(key), 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`sysctl.${fn}: no such key: ${key}`);
    throw error;
  }
}

/** The persisted file with the key's line set to `key = value`. */
export function persistLine(text: string, key: string, value: string): string {
  const line = `${key} = ${value}`;
  const lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
  const at = lines.findIndex((l) => l.split('=')[0].trim() === key);
  if (at >= 0) lines[at] = line;
  else lines.push(line);
  return `${lines.join('\n')}\n`;
}

export function createSysctlModule(): LuaModuleImplementation<keyof typeof sysctlModule.functions> {
  return {
    get: async (_call, keyArg) => running('get', keyOf('get', keyArg)),
    async set(call, keyArg, valueArg, optsArg) {
      const key = keyOf('set', keyArg);
      if (typeof valueArg !== 'string' && typeof valueArg !== 'number')
        throw new Error('sysctl.set: argument 2 must be a string or a number');
      const value = normal(String(valueArg));
      const o = options('sysctl.set', optsArg, 3, ['persist', 'apply', 'file'] as const);
      const apply = optBoolean('sysctl.set', 'apply', o.apply) ?? true;
      const persist = optBoolean('sysctl.set', 'persist', o.persist) ?? true;
      const file = optString('sysctl.set', 'file', o.file) ?? '/etc/sysctl.d/99-runner.conf';
      const now = apply ? await running('set', key) : value;
      const text = persist ? await readText(file) : '';
      const persisted = persist ? persistLine(text, key, value) : text;
      return change(
        call,
        now !== value || persisted !== text,
        `set ${key} = ${value}`,
        async () => {
          if (now !== value) {
            try {
              await writeFile(procPath(key), value);
            } catch (error) {
              throw new Error(
                `sysctl.set: cannot set ${key} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}; read-only in a container?)`,
              );
            }
          }
          if (persisted !== text) await writeText(file, persisted);
        },
        { key, value },
      );
    },
  };
}
