import { localAction, NotFoundError, resourceCommand, type CommandSpec } from '@runner/plugin-sdk';
import { createTokenFile, currentToken, tokenFile } from './token.js';

/**
 * `runner agent token create|show`: the join token agents present to this master. They work on
 * the data directory alone, with or without a running master (which re-reads the file).
 */
export const agentTokenCommand: CommandSpec = {
  name: 'agent',
  description: 'agents: list, inspect and control them, start one, manage the join token',
  subcommands: [
    resourceCommand({
      name: 'token',
      description: 'the join token agents present to this master',
      actions: [
        localAction({
          name: 'create',
          description: 'create the join token in <data-dir>/agent-token (mode 0600) and print it',
          options: [
            {
              flags: '--force',
              description: 'replace an existing token (agents holding the old one cannot reconnect)',
            },
          ],
          local: (input, ctx) => {
            const created = createTokenFile(ctx.config.dataDir, { force: input.options.force === true });
            const overridden = ctx.config.get('agent.join_token', '').trim() !== '';
            return {
              ...created,
              ...(overridden
                ? { overridden_by: `config agent.join_token (${ctx.config.sourceOf('agent.join_token')})` }
                : {}),
            };
          },
          // The token alone on stdout, so `$(runner agent token create)` works.
          text: ({ token }) => `${token}\n`,
          note: ({ path, overridden_by }) =>
            overridden_by
              ? `runner: note: ${overridden_by} is set and wins over ${path}\n`
              : `join token written to ${path}; start agents with --token <token> or RUNNER_JOIN_TOKEN=<token>\n`,
        }),
        localAction({
          name: 'show',
          description:
            'print the join token agents must present (config agent.join_token, else <data-dir>/agent-token)',
          local: (_input, ctx) => {
            const current = currentToken(ctx.config);
            if (!current)
              throw new NotFoundError(
                `no join token yet (${tokenFile(ctx.config.dataDir)} does not exist); create one with \`runner agent token create\` (the master also creates it on its first start)`,
              );
            return current;
          },
          text: ({ token }) => `${token}\n`,
          note: ({ source }) => `from ${source}\n`,
        }),
      ],
    }),
  ],
};
