import type { CommandSpec } from '@runner/plugin-sdk';
import { createTokenFile, currentToken, tokenFile } from './token.js';

/**
 * `runner agent token create|show`: the join token agents present to this master. They work on
 * the data directory alone, with or without a running master (which re-reads the file).
 */
export const agentTokenCommand: CommandSpec = {
  name: 'agent',
  description: 'agents: list, inspect and control them, start one, manage the join token',
  subcommands: [
    {
      name: 'token',
      description: 'the join token agents present to this master',
      subcommands: [
        {
          name: 'create',
          description: 'create the join token in <data-dir>/agent-token (mode 0600) and print it',
          options: [
            {
              flags: '--force',
              description: 'replace an existing token (agents holding the old one cannot reconnect)',
            },
          ],
          run: ({ options }, ctx) => {
            const { path, token } = createTokenFile(ctx.config.dataDir, { force: options.force === true });
            const overridden = ctx.config.get('agent.join_token', '').trim() !== '';
            ctx.stderr.write(
              overridden
                ? `runner: note: config agent.join_token (from ${ctx.config.sourceOf('agent.join_token')}) is set and wins over ${path}\n`
                : `join token written to ${path}; start agents with --token <token> or RUNNER_JOIN_TOKEN=<token>\n`,
            );
            ctx.stdout.write(`${token}\n`);
            return 0;
          },
        },
        {
          name: 'show',
          description:
            'print the join token agents must present (config agent.join_token, else <data-dir>/agent-token)',
          run: (_input, ctx) => {
            const current = currentToken(ctx.config);
            if (!current) {
              ctx.stderr.write(
                `runner: no join token yet (${tokenFile(ctx.config.dataDir)} does not exist); create one with \`runner agent token create\` (the master also creates it on its first start)\n`,
              );
              return 1;
            }
            ctx.stderr.write(`from ${current.source}\n`);
            ctx.stdout.write(`${current.token}\n`);
            return 0;
          },
        },
      ],
    },
  ],
};
