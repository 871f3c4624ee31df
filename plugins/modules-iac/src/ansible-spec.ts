import { defineLuaModule } from '@runner/plugin-sdk';

const COMMON =
  'inventory?: string|string[], limit?: string, extra_vars?: table, check?: boolean, diff?: boolean, become?: boolean, user?: string, connection?: string, forks?: number, env?: table, ignore_errors?: boolean';
const RESULT = '{changed, success, stats, tasks = {play, task, host, status, msg, result}[], failures}';

export const ansibleModule = defineLuaModule({
  name: 'ansible',
  description: 'Ansible: run a playbook or an ad-hoc module, results parsed from its JSON output',
  docs: `
Drives ansible-playbook and ansible on the host (Debian's ansible package; the JSON callback
ansible.posix.json must be installed). Results come from that callback: tasks lists every task on
every host with its status (ok, changed, failed, unreachable, skipped), its message and the module's
whole result; stats holds the totals per host; changed is true when any host reports a change.
A failed or unreachable host raises an error listing each failure ("web1: start app: ...") unless
opts.ignore_errors, which returns the result with success = false instead.
Dry-run runs in Ansible's check mode with --diff: modules that support it report what they would
change and change nothing (the result has dry_run = true). extra_vars are passed in a temporary
file readable by the runner only, never on the command line. Connection credentials come from the
inventory, ssh-agent or opts.env (ANSIBLE_* variables), and are never logged.`,
  functions: {
    playbook: {
      args: [
        { name: 'path', type: 'string' },
        { name: 'opts', type: `{${COMMON}, tags?: string[], skip_tags?: string[]}`, optional: true },
      ],
      result: RESULT,
      callsLua: false,
      sideEffects: true,
      description: 'Runs a playbook. opts.inventory: a file, or "host1,host2," as on the command line.',
      example: `local r = ansible.playbook("/srv/ansible/site.yml", { inventory = "/srv/ansible/hosts", limit = "web",
  extra_vars = { version = vars.version } })
log.info("ansible", { changed = r.changed })`,
    },
    module: {
      args: [
        { name: 'pattern', type: 'string' },
        { name: 'module', type: 'string' },
        { name: 'args', type: 'string|table', optional: true },
        { name: 'opts', type: `{${COMMON}}`, optional: true },
      ],
      result: RESULT,
      callsLua: false,
      sideEffects: true,
      description: `Runs one module on the hosts matching pattern (\`ansible pattern -m module -a args\`). args is the
module's free-form text ("uptime") or a table of its parameters, passed as JSON.`,
      example: `ansible.module("web", "ansible.builtin.service", { name = "nginx", state = "restarted" },
  { inventory = "/srv/ansible/hosts", become = true })`,
    },
  },
});
