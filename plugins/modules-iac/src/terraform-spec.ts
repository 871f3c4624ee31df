import { defineLuaModule } from '@runner/plugin-sdk';

const PLAN_OPTS =
  '{vars?: table, var_files?: string[], targets?: string[], destroy?: boolean, refresh?: boolean, env?: table}';
const PLAN_RESULT =
  '{changed, summary = {add, change, destroy, import}, resources = {address, type, name, action}[], outputs}';

function terraformFunctions(t: 'terraform' | 'tofu') {
  return {
    init: {
      args: [
        { name: 'dir', type: 'string' },
        {
          name: 'opts',
          type: '{backend_config?: table, upgrade?: boolean, reconfigure?: boolean, backend?: boolean, env?: table}',
          optional: true,
        },
      ],
      result: '{changed}',
      callsLua: false,
      sideEffects: true,
      description: `\`${t} init\` in dir. changed when the lock file, the backend settings or the installed modules
are other than before (an init with nothing new to fetch changes nothing). opts.backend_config
entries become -backend-config=key=value. In dry-run nothing runs and changed is nil: whether init
would fetch anything is known only by running it.`,
    },
    validate: {
      args: [{ name: 'dir', type: 'string' }],
      result: '{valid, diagnostics}',
      callsLua: false,
      sideEffects: false,
      description: `\`${t} validate -json\`: valid, and the diagnostics ({ severity, summary, detail, range }) when not.`,
    },
    plan: {
      args: [
        { name: 'dir', type: 'string' },
        { name: 'opts', type: PLAN_OPTS, optional: true },
      ],
      result: PLAN_RESULT,
      callsLua: false,
      sideEffects: false,
      description: `Plans and reads the plan back from \`${t} show -json\`. summary counts as the plan prints them (a
replace adds one and destroys one); resources lists each resource that would change with its action
(create, update, delete, replace, import); outputs maps each output to its action. changed is true
when any resource or output would change. opts.vars are written to a temporary .tfvars.json (so
lists, maps and secrets never reach the command line); opts.env adds variables (TF_VAR_x, provider
credentials) for this call.`,
      example: `local p = ${t}.plan("/srv/infra", { vars = { env = "prod" } })
log.info("plan", p.summary)`,
    },
    apply: {
      args: [
        { name: 'dir', type: 'string' },
        { name: 'opts', type: PLAN_OPTS, optional: true },
      ],
      result: PLAN_RESULT,
      callsLua: false,
      sideEffects: true,
      description: `Plans, and applies that saved plan only when it would change something: changed comes from the
plan, so a second apply of the same configuration reports changed = false and runs no apply. In
dry-run it plans (nothing changes) and returns the plan with dry_run = true.`,
      example: `local r = ${t}.apply("/srv/infra", { vars = { replicas = 3 } })
if r.changed then log.info("applied", r.summary) end`,
    },
    destroy: {
      args: [
        { name: 'dir', type: 'string' },
        { name: 'opts', type: PLAN_OPTS, optional: true },
      ],
      result: PLAN_RESULT,
      callsLua: false,
      sideEffects: true,
      description: 'Plans a destroy and applies it when there is something to destroy; as apply otherwise.',
    },
    output: {
      args: [
        { name: 'dir', type: 'string' },
        { name: 'name', type: 'string', optional: true },
      ],
      result: 'any',
      callsLua: false,
      sideEffects: false,
      description: `The value of one output, or a table of every output's value. Sensitive outputs are returned too
(the state holds them in clear): keep them out of logs.`,
      example: `local ip = ${t}.output("/srv/infra", "public_ip")`,
    },
  } as const;
}

const docs = (t: string) => `
Drives the \`${t}\` command line on the host (it must be installed), in the configuration directory
given to each function, with TF_IN_AUTOMATION, no input prompts, no colour and no version check.
Provider credentials come from the runner's environment (AWS_*, GOOGLE_*, ARM_*) or from opts.env,
for instance from a stack's secrets; they are never logged, and variables go through a temporary
file, not the command line. Errors carry the last lines of ${t}'s own message.`;

export const terraformModule = defineLuaModule({
  name: 'terraform',
  description: 'Terraform: init, validate, plan with a parsed summary, apply (changed from the plan), destroy, output',
  docs: docs('terraform'),
  functions: terraformFunctions('terraform'),
});

export const tofuModule = defineLuaModule({
  name: 'tofu',
  description: 'OpenTofu: init, validate, plan with a parsed summary, apply (changed from the plan), destroy, output',
  docs: docs('tofu'),
  functions: terraformFunctions('tofu'),
});
