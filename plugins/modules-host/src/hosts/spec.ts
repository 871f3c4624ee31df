import { defineLuaModule } from '@runner/plugin-sdk';

const path = { name: 'opts', type: '{path?: string}', optional: true };

/** Static declaration of the `hosts` module. */
export const hostsModule = defineLuaModule({
  name: 'hosts',
  description: 'Entries of /etc/hosts',
  docs: `
An entry is an address and its names. present makes the line for the address exactly
"<address> <names...>" (replacing another line for that address), absent removes the address's
lines. Other lines and comments are kept as they are; the file is replaced atomically. opts.path
names another file (default /etc/hosts).`,
  functions: {
    present: {
      args: [{ name: 'address', type: 'string' }, { name: 'names', type: 'string|string[]' }, path],
      result: '{changed, path}',
      description: 'Makes the address map to exactly these names.',
      sideEffects: true,
      callsLua: false,
      example: `hosts.present("10.0.0.5", { "db.internal", "db" })`,
    },
    absent: {
      args: [{ name: 'address', type: 'string' }, path],
      result: '{changed, path}',
      description: 'Removes the lines of the address.',
      sideEffects: true,
      callsLua: false,
      example: `hosts.absent("10.0.0.5")`,
    },
    list: {
      args: [path],
      result: '{address, names: string[]}[]',
      description: 'Every entry of the file, in order.',
      sideEffects: false,
      callsLua: false,
      example: `for _, e in ipairs(hosts.list()) do print(e.address, table.concat(e.names, " ")) end`,
    },
  },
});
