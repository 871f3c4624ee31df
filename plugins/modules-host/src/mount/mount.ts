import { mkdir } from 'node:fs/promises';
import type { LuaModuleImplementation } from '@runner/plugin-sdk';
import { change, options, optBoolean, optString, requireString } from '../host/args.js';
import { mustRun } from '../host/command.js';
import { readText, writeText } from '../host/text-file.js';
import type { mountModule } from './spec.js';

/** /proc/self/mounts escapes spaces and such as octal (\040). */
const unescape = (field: string) =>
  field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));

export async function mountedOn(target: string): Promise<{ source: string; fstype: string; options: string } | null> {
  const lines = (await readText('/proc/self/mounts')).split('\n').filter(Boolean);
  const found = lines
    .map((l) => l.split(' ').map(unescape))
    .filter((f) => f[1] === target.replace(/\/+$/, '') || f[1] === target);
  const last = found[found.length - 1];
  return last ? { source: last[0], fstype: last[2], options: last[3] } : null;
}

/** fstab with target's line set (or removed when line is null). */
export function editFstab(text: string, target: string, line: string | null): string {
  const lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
  const kept = lines.filter((l) => l.trim().startsWith('#') || l.trim().split(/\s+/)[1] !== target);
  if (line !== null) kept.push(line);
  return kept.length ? `${kept.join('\n')}\n` : '';
}

export function createMountModule(): LuaModuleImplementation<keyof typeof mountModule.functions> {
  return {
    async mounted(call, sourceArg, targetArg, optsArg) {
      const source = requireString('mount.mounted', sourceArg, 1, 'a source');
      const target = requireString('mount.mounted', targetArg, 2, 'a target directory');
      const o = options('mount.mounted', optsArg, 3, ['fstype', 'options', 'persist', 'fstab'] as const);
      const fstype = optString('mount.mounted', 'fstype', o.fstype) ?? 'auto';
      const mountOptions = optString('mount.mounted', 'options', o.options) ?? 'defaults';
      const fstab = optString('mount.mounted', 'fstab', o.fstab) ?? '/etc/fstab';
      const persist = optBoolean('mount.mounted', 'persist', o.persist) ?? false;
      const current = await mountedOn(target);
      const mountNeeded = current?.source !== source;
      const fstabText = persist ? await readText(fstab) : '';
      const nextFstab = persist
        ? editFstab(fstabText, target, `${source} ${target} ${fstype} ${mountOptions} 0 0`)
        : fstabText;
      return change(
        call,
        mountNeeded || nextFstab !== fstabText,
        `mount ${source} on ${target}`,
        async () => {
          if (mountNeeded) {
            await mkdir(target, { recursive: true });
            await mustRun('mount.mounted', ['mount', '-t', fstype, '-o', mountOptions, '--', source, target], {
              signal: call.signal,
            });
          }
          if (nextFstab !== fstabText) await writeText(fstab, nextFstab);
        },
        { target },
      );
    },
    async unmounted(call, targetArg, optsArg) {
      const target = requireString('mount.unmounted', targetArg, 1, 'a target directory');
      const o = options('mount.unmounted', optsArg, 2, ['persist', 'fstab'] as const);
      const fstab = optString('mount.unmounted', 'fstab', o.fstab) ?? '/etc/fstab';
      const persist = optBoolean('mount.unmounted', 'persist', o.persist) ?? false;
      const mounted = (await mountedOn(target)) !== null;
      const fstabText = persist ? await readText(fstab) : '';
      const nextFstab = persist ? editFstab(fstabText, target, null) : fstabText;
      return change(
        call,
        mounted || nextFstab !== fstabText,
        `unmount ${target}`,
        async () => {
          if (mounted) await mustRun('mount.unmounted', ['umount', '--', target], { signal: call.signal });
          if (nextFstab !== fstabText) await writeText(fstab, nextFstab);
        },
        { target },
      );
    },
    async info(_call, targetArg) {
      const found = await mountedOn(requireString('mount.info', targetArg, 1, 'a target directory'));
      return found ? { mounted: true, ...found } : { mounted: false };
    },
  };
}
