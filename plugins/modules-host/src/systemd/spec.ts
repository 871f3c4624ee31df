import { defineLuaModule } from '@runner/plugin-sdk';

const unit = { name: 'unit', type: 'string' };
const action = (verb: string, when: string, example: string) => ({
  args: [unit],
  result: '{changed, unit}',
  description: `${verb} the unit ${when}.`,
  sideEffects: true,
  callsLua: false,
  example,
});

/** Static declaration of the `systemd` module: `runner modules info systemd` prints it. */
export const systemdModule = defineLuaModule({
  name: 'systemd',
  description: 'Start, stop, enable and inspect systemd units; install unit files; read the journal',
  docs: `
Drives systemctl and journalctl. A host where systemd is not running (a container, a chroot, a
machine with another init) gets a clear error from every function but install_unit, which writes
the file and skips the daemon-reload (reloaded = false). A unit without a suffix is a .service.
start, stop, enable and disable act only when the unit is not already so; restart and reload
always act (changed = true). In dry-run nothing is done: changed and would_change say whether it
would be, note says what.`,
  functions: {
    start: action('Starts', 'unless it is active', `systemd.start("nginx")`),
    stop: action('Stops', 'if it is active', `systemd.stop("nginx")`),
    restart: action('Restarts', '(always a change)', `systemd.restart("nginx")`),
    reload: action('Reloads', "(always a change; the unit's ExecReload)", `systemd.reload("nginx")`),
    enable: action('Enables', 'unless it is enabled', `systemd.enable("nginx")`),
    disable: action('Disables', 'if it is enabled', `systemd.disable("nginx")`),
    status: {
      args: [unit],
      result: '{unit, active: boolean, active_state, sub_state, load_state, enabled: string, main_pid}',
      description: 'What systemd says of the unit (systemctl show and is-enabled).',
      sideEffects: false,
      callsLua: false,
      example: `if not systemd.status("nginx").active then error("nginx is down") end`,
    },
    install_unit: {
      args: [
        { name: 'name', type: 'string' },
        { name: 'content', type: 'string' },
        { name: 'opts', type: '{dir?: string}', optional: true },
      ],
      result: '{changed, path, reloaded: boolean}',
      description: `Writes the unit file (dir: /etc/systemd/system by default) when its content differs, then
runs systemctl daemon-reload so systemd reads it (reloaded = true); without a running systemd the
reload is skipped and reloaded is false.`,
      sideEffects: true,
      callsLua: false,
      example: `systemd.install_unit("app.service", template.render(src, vars))
systemd.enable("app")
systemd.start("app")`,
    },
    journal: {
      args: [unit, { name: 'opts', type: '{lines?: integer, since?: string}', optional: true }],
      result: 'string[]',
      description: "The unit's last journal lines (default 50), oldest first; since as journalctl takes it.",
      sideEffects: false,
      callsLua: false,
      example: `for _, line in ipairs(systemd.journal("app", { lines = 20 })) do print(line) end`,
    },
  },
});
