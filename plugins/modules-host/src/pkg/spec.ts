import { defineLuaModule } from '@runner/plugin-sdk';

const names = { name: 'names', type: 'string|string[]' };
const opts = {
  name: 'opts',
  type: '{manager?: "apt"|"dnf"|"yum"|"apk"|"pacman"|"zypper"|"brew", refresh?: boolean}',
  optional: true,
};

/** Static declaration of the `pkg` module: `runner modules info pkg` prints it. */
export const pkgModule = defineLuaModule({
  name: 'pkg',
  description: 'Install, remove, upgrade and query system packages (apt, dnf, yum, apk, pacman, zypper, brew)',
  docs: `
The manager is detected (the first of apt-get, dnf, yum, apk, pacman, zypper, brew on PATH) or
named with opts.manager. Every function asks the manager first and acts only on what differs:
changed is true only when a package was installed, removed or upgraded. opts.refresh = true
refreshes the index of available packages (apt-get update, dnf makecache...) before acting. In
dry-run nothing is installed or removed: changed and would_change say whether it would be, note
says what. Managers run without prompting (DEBIAN_FRONTEND=noninteractive for apt); installing
needs root, so such tasks run on an agent started as root or with engine.run_as allowing it.`,
  functions: {
    install: {
      args: [names, opts],
      result: '{changed, installed: string[], manager}',
      description: 'Installs the packages that are not installed yet; installed lists them.',
      sideEffects: true,
      callsLua: false,
      example: `local r = pkg.install({ "nginx", "curl" })
if r.changed then log.info("installed", { packages = r.installed }) end`,
    },
    remove: {
      args: [names, opts],
      result: '{changed, removed: string[], manager}',
      description: 'Removes the packages that are installed; removed lists them.',
      sideEffects: true,
      callsLua: false,
      example: `pkg.remove("telnet")`,
    },
    update: {
      args: [names, opts],
      result: '{changed, upgraded: string[], manager}',
      description: `Upgrades the installed ones of the packages to the newest version the manager offers;
upgraded lists those whose version changed. Packages not installed are left alone.`,
      sideEffects: true,
      callsLua: false,
      example: `pkg.update("openssl", { refresh = true })`,
    },
    query: {
      args: [
        { name: 'name', type: 'string' },
        { name: 'opts', type: '{manager?: string}', optional: true },
      ],
      result: '{installed: boolean, version?: string, manager}',
      description: 'Whether the package is installed, and its version.',
      sideEffects: false,
      callsLua: false,
      example: `if not pkg.query("nginx").installed then error("nginx missing") end`,
    },
  },
});
