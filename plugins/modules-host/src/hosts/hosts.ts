import type { LuaCallContext, LuaModuleImplementation, LuaValue } from '@runner/plugin-sdk';
import { change, options, optString, requireString, stringList } from '../host/args.js';
import { readText, writeText } from '../host/text-file.js';
import type { hostsModule } from './spec.js';

const addressOf = (line: string): string | null => {
  const content = line.split('#')[0].trim();
  return content ? content.split(/\s+/)[0] : null;
};

/** The file with the address's lines replaced by `entry` (at the first one's place) or removed. */
export function editHosts(text: string, address: string, entry: string | null): string {
  const lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
  const out: string[] = [];
  let placed = false;
  for (const line of lines) {
    if (addressOf(line) !== address) out.push(line);
    else if (entry !== null && !placed) {
      out.push(entry);
      placed = true;
    }
  }
  if (entry !== null && !placed) out.push(entry);
  return out.length ? `${out.join('\n')}\n` : '';
}

function pathOf(fn: string, value: LuaValue, position: number): string {
  return (
    optString(`hosts.${fn}`, 'path', options(`hosts.${fn}`, value, position, ['path'] as const).path) ?? '/etc/hosts'
  );
}

async function apply(call: LuaCallContext, path: string, address: string, entry: string | null) {
  const text = await readText(path);
  const next = editHosts(text, address, entry);
  const what = entry ? `set ${entry} in ${path}` : `remove ${address} from ${path}`;
  return change(call, next !== text, what, () => writeText(path, next), { path });
}

export function createHostsModule(): LuaModuleImplementation<keyof typeof hostsModule.functions> {
  return {
    async present(call, addressArg, namesArg, opts) {
      const address = requireString('hosts.present', addressArg, 1, 'an address');
      const names = stringList('hosts.present', namesArg, 2);
      return apply(call, pathOf('present', opts, 3), address, `${address} ${names.join(' ')}`);
    },
    async absent(call, addressArg, opts) {
      return apply(call, pathOf('absent', opts, 2), requireString('hosts.absent', addressArg, 1, 'an address'), null);
    },
    async list(_call, opts) {
      const text = await readText(pathOf('list', opts, 1));
      return text
        .split('\n')
        .map((l) => l.split('#')[0].trim())
        .filter(Boolean)
        .map((l) => {
          const [address, ...names] = l.split(/\s+/);
          return { address, names };
        });
    },
  };
}
