import { InvalidInputError, readHiddenLine, resourceCommand, type CommandSpec } from '@runner/plugin-sdk';
import { deleteSecretsStackName, getSecretsStack, postSecretsRotateKey, putSecretsStackName } from './api.js';

/**
 * `runner secret add|list|remove|rotate-key`: each subcommand is one of the plugin's routes. A
 * value not given as an argument is read from a prompt without echo, or from stdin when piped, so
 * it stays out of the shell's history and `ps`.
 */
export const secretCommand: CommandSpec = resourceCommand({
  name: 'secret',
  description:
    'secrets of stacks: values sealed at rest, read by runs of their stack as secrets.<name>; names only shown',
  actions: [
    {
      name: 'add',
      aliases: ['set'],
      route: putSecretsStackName,
      description: 'set a secret of a stack (the value from a prompt or stdin when not given)',
      positional: ['value'],
      body: async (input, ctx) => {
        if (typeof input.args.value === 'string' && input.args.value !== '') return {};
        const value = await readHiddenLine(ctx, `value of ${input.args.name} in ${input.args.stack}: `);
        if (!value)
          throw new InvalidInputError('no value given: type it at the prompt or pipe it on stdin', { field: 'value' });
        return { value };
      },
      text: (answer) => `secret ${answer.name} ${answer.created ? 'added to' : 'replaced in'} ${answer.stack}\n`,
    },
    {
      name: 'list',
      aliases: ['ls'],
      route: getSecretsStack,
      description: "a stack's secret names, last update and the flows that use them",
      rows: 'secrets',
      empty: 'no secrets in this stack (add one with runner secret add <stack> <name>)',
      columns: [
        { header: 'NAME', field: 'name' },
        { header: 'UPDATED', field: 'updated_at' },
        { header: 'BY', field: 'updated_by' },
        { header: 'USED BY', value: (s) => (s.used_by as string[]).join(', ') || '-' },
      ],
    },
    {
      name: 'remove',
      aliases: ['rm'],
      route: deleteSecretsStackName,
      text: (_answer: unknown, input) => `secret ${input.args.name} removed from ${input.args.stack}\n`,
    },
    {
      name: 'rotate-key',
      route: postSecretsRotateKey,
      description:
        'a new key; every secret sealed again under it, all or nothing (other masters need the new key file)',
      text: (answer: { rotated: number; key_id: string; previous_key_id?: string }) =>
        `${answer.rotated} secret(s) sealed again under key ${answer.key_id}` +
        `${answer.previous_key_id ? ` (was ${answer.previous_key_id})` : ''}\n`,
    },
  ],
});
