import type { CommandSpec } from '@runner/plugin-sdk';

const collect = (value: string, previous: unknown) => [...((previous as string[] | undefined) ?? []), value];
/** `--delegate-to a,b` and `--delegate-to a --delegate-to b` alike. */
const collectList = (value: string, previous: unknown) => [
  ...((previous as string[] | undefined) ?? []),
  ...value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== ''),
];

/** `runner run`: declared here, implemented in run-command.ts (loaded only when it runs). */
export const runCommand: CommandSpec = {
  name: 'run',
  description: 'run a workflow (embedded, or on the master that holds the data directory)',
  arguments: [
    {
      name: 'workflow',
      description:
        'the workflow file (runner run deploy.yaml) or a saved flow (runner run deploy); with --file, the name the run is recorded under',
      // Optional: `runner run --file deploy.yaml` alone names the run after the file.
      required: false,
    },
  ],
  options: [
    { flags: '-f, --file <path>', description: 'the workflow file' },
    { flags: '--version <n>', description: 'run this version of the saved flow (default its current one)' },
    { flags: '-g, --group <name>', description: "run only this group's tasks and what they depend on" },
    { flags: '--values <file>', description: 'YAML file of per-agent values, merged over the workflow values' },
    { flags: '--var <key=value>', description: 'set a workflow var (repeatable)', parse: collect },
    {
      flags: '--delegate-to <agents>',
      description: 'run every task on these agents (comma-separated, repeatable)',
      parse: collectList,
    },
    {
      flags: '--forks <n>',
      description: "delegated units that may run at once (default: the workflow's forks, else 10)",
    },
    { flags: '-n, --dry-run', description: 'report what would change; no module with side effects acts' },
    { flags: '-v, --verbose', description: 'show every log line of every task' },
    {
      flags: '--stack <name>',
      description: "the stack (environment) whose variables and secrets the run reads (default: the workflow's stack:)",
    },
    {
      flags: '-y, --yes',
      description: 'do not ask for confirmation before delegating to agents; confirms a run on a production stack',
    },
    {
      flags: '-o, --output <format>',
      description: 'text (live view on a terminal) or json (one object a line)',
      choices: ['text', 'json'],
      default: 'text',
    },
  ],
  run: async (input, ctx) => (await import('./run-command.js')).runWorkflowCommand(input, ctx),
};
