import { defineLuaModule } from '@runner/plugin-sdk';

/** Static declaration of the `sysctl` module. */
export const sysctlModule = defineLuaModule({
  name: 'sysctl',
  description: 'Kernel parameters: read, set now, and persist in /etc/sysctl.d',
  docs: `
Keys are written with dots (net.ipv4.ip_forward) and live under /proc/sys. set changes the running
value when it differs and, with persist (the default), keeps "key = value" in
/etc/sysctl.d/99-runner.conf (opts.file names another) so it holds after a reboot; changed says
whether either changed. In a container most keys are read-only: set raises naming the key.`,
  functions: {
    get: {
      args: [{ name: 'key', type: 'string' }],
      result: 'string',
      description: 'The running value (whitespace between fields made single spaces).',
      sideEffects: false,
      callsLua: false,
      example: `if sysctl.get("net.ipv4.ip_forward") ~= "1" then error("forwarding is off") end`,
    },
    set: {
      args: [
        { name: 'key', type: 'string' },
        { name: 'value', type: 'string|number' },
        { name: 'opts', type: '{persist?: boolean, apply?: boolean, file?: string}', optional: true },
      ],
      result: '{changed, key, value}',
      description: 'Sets the running value (unless apply = false) and persists it (unless persist = false).',
      sideEffects: true,
      callsLua: false,
      example: `sysctl.set("vm.swappiness", 10)`,
    },
  },
});
