import {
  InvalidInputError,
  configRows,
  definePlugin,
  localAction,
  resourceCommand,
  type CommandContext,
} from '@runner/plugin-sdk';

const SHELLS = ['bash', 'zsh', 'fish'];
const modules = () => import('./src/modules-command.js');

/**
 * Utilities of the `runner` CLI that need no running kernel: they read the plugins' declarations,
 * the command tree and the machine. Implementations load only when their command runs.
 */
export const plugin = definePlugin({
  id: 'cli-tools',
  version: '0.1.0',
  description: 'runner modules list/info, runner config show, runner doctor and runner completion',
  commands: [
    resourceCommand({
      name: 'modules',
      description: 'Lua modules available to workflows',
      actions: [
        localAction({
          name: 'list',
          description: 'list the Lua modules of the loaded plugins',
          local: async (_input, ctx) => (await modules()).listModules(ctx),
          text: async (rows) => (await modules()).moduleTable(rows),
        }),
        localAction({
          name: 'info',
          description: "show a module's functions and their documentation",
          arguments: [{ name: 'name', description: 'module name, e.g. exec' }],
          local: async (input, ctx) => (await modules()).moduleInfo(ctx, input.args.name),
          text: async (info) => (await modules()).moduleText(info),
        }),
      ],
    }),
    resourceCommand({
      name: 'config',
      description: 'the configuration plugins read',
      actions: [
        localAction({
          name: 'show',
          description:
            'print every config key with its effective value, its source (default, file, env, flag) and help; secrets redacted',
          local: (_input, ctx) => configRows(ctx),
          text: async (rows) => (await import('./src/config-command.js')).configTable(rows),
        }),
      ],
    }),
    {
      name: 'doctor',
      description: 'check node, the data directory, config, ports and the master, with a fix for each problem',
      options: [
        { flags: '--output <format>', description: 'text or json', choices: ['text', 'json'], default: 'text' },
      ],
      tolerateConfigError: true,
      run: async ({ options }, ctx: CommandContext) => {
        const { runChecks, formatChecks } = await import('./src/doctor.js');
        const checks = await runChecks(ctx);
        ctx.stdout.write(
          options.output === 'json' ? `${JSON.stringify({ checks })}\n` : `${formatChecks(checks, ctx.isTTY)}\n`,
        );
        return checks.some((c) => c.status === 'fail') ? 1 : 0;
      },
    },
    {
      name: 'completion',
      description: 'print a shell completion script (bash, zsh or fish)',
      arguments: [{ name: 'shell', description: 'bash, zsh or fish', choices: SHELLS }],
      run: async ({ args }, ctx) => {
        const generators = await import('./src/completion.js');
        const shell = args[0];
        if (!SHELLS.includes(shell))
          throw new InvalidInputError(`unknown shell "${shell}" (choose ${SHELLS.join(', ')})`, { field: 'shell' });
        const script =
          shell === 'bash'
            ? generators.bashCompletion(ctx.commands)
            : shell === 'zsh'
              ? generators.zshCompletion(ctx.commands)
              : generators.fishCompletion(ctx.commands);
        ctx.stdout.write(script);
      },
    },
  ],
});
