import { definePlugin } from '@runner/plugin-sdk';

/**
 * `runner repl`: Lua with every module loaded, in a kernel of the embedded profile the command
 * boots itself. The plugin only contributes the command; its code loads when the command runs.
 */
export const plugin = definePlugin({
  id: 'repl',
  version: '0.1.0',
  description: 'runner repl: an interactive Lua 5.3 session with every module loaded',
  profiles: ['embedded'],
  commands: [
    {
      name: 'repl',
      description: 'interactive Lua with every module loaded (.help inside for its commands)',
      options: [
        {
          flags: '--dry-run',
          description: 'module functions with side effects only say what they would do',
          default: false,
        },
      ],
      run: async ({ options }, ctx) =>
        (await import('./repl-command.js')).replCommand({ dryRun: options.dryRun === true }, ctx),
    },
  ],
});
