import { MASTER_URL_OPTION, type CommandSpec } from '@runner/plugin-sdk';

/** `runner executions ...`: declared here, implemented in executions-command.ts (loaded only when it runs). */
export const executionsCommand: CommandSpec = {
  name: 'executions',
  description: 'runs recorded by the master',
  subcommands: [
    {
      name: 'cancel',
      description: 'cancel a running run: its tasks are stopped (on agents too) and it ends cancelled',
      arguments: [{ name: 'id', description: 'the run id (runner run and the API show it)', required: true }],
      options: [
        {
          flags: '-o, --output <format>',
          description: 'text or json (the final record)',
          choices: ['text', 'json'],
          default: 'text',
        },
        MASTER_URL_OPTION,
      ],
      run: async (input, ctx) => (await import('./executions-command.js')).cancelCommand(input, ctx),
    },
  ],
};
