import { resourceCommand, type CommandSpec } from '@runner/plugin-sdk';
import {
  deleteStacksName,
  deleteStacksNameVariablesKey,
  getStacks,
  getStacksName,
  postStacks,
  postStacksNameVariables,
  putStacksName,
} from './api.js';

interface StackAnswer {
  name: string;
  description: string;
  environment: string;
  active: boolean;
  variables: Record<string, string>;
  secret_count: number;
  last_execution: { id: string; workflow_name: string; status: string; started_at: string } | null;
}

function showStack(stack: StackAnswer): string {
  const last = stack.last_execution;
  let text = `name:        ${stack.name}\nenvironment: ${stack.environment}\n`;
  text += `active:      ${stack.active ? 'yes' : 'no (runs naming it are refused)'}\n`;
  text += `description: ${stack.description || '-'}\nsecrets:     ${stack.secret_count} (runner secret list ${stack.name})\n`;
  text += `last run:    ${last ? `${last.id} ${last.workflow_name} ${last.status} at ${last.started_at}` : '-'}\n`;
  const keys = Object.keys(stack.variables);
  text += `variables:   ${keys.length}\n`;
  for (const key of keys) text += `  ${key}=${stack.variables[key]}\n`;
  return text;
}

/** `runner stack list|add|get|update|remove|var set|var unset`: each one of the plugin's routes. */
export const stackCommand: CommandSpec = resourceCommand({
  name: 'stack',
  description: 'stacks (environments): variables and secrets runs read with runner run --stack <name>',
  actions: [
    {
      name: 'list',
      aliases: ['ls'],
      route: getStacks,
      rows: 'stacks',
      empty: 'no stacks (add one with runner stack add <name> --environment staging)',
      columns: [
        { header: 'NAME', field: 'name' },
        { header: 'ENVIRONMENT', field: 'environment' },
        { header: 'ACTIVE', value: (s) => (s.active ? 'yes' : 'no') },
        { header: 'VARIABLES', field: 'variable_count' },
        { header: 'SECRETS', field: 'secret_count' },
        {
          header: 'LAST RUN',
          value: (s) => {
            const last = s.last_execution as StackAnswer['last_execution'];
            return last ? `${last.status} ${last.started_at}` : '-';
          },
        },
      ],
    },
    { name: 'add', route: postStacks, positional: ['name'], short: { description: '-d' }, text: showStack },
    { name: 'get', aliases: ['show'], route: getStacksName, text: showStack },
    { name: 'update', route: putStacksName, short: { description: '-d' }, text: showStack },
    {
      name: 'remove',
      aliases: ['rm'],
      route: deleteStacksName,
      text: (_answer: unknown, input) => `stack ${input.args.name} removed\n`,
    },
  ],
  subcommands: [
    resourceCommand({
      name: 'var',
      description: "a stack's variables (stack.vars.<key>; they override the workflow's declared vars)",
      actions: [
        {
          name: 'set',
          route: postStacksNameVariables,
          positional: ['key', 'value'],
          text: (stack: StackAnswer, input) => `${input.args.key} set in stack ${stack.name}\n`,
        },
        {
          name: 'unset',
          route: deleteStacksNameVariablesKey,
          text: (stack: StackAnswer, input) => `${input.args.key} removed from stack ${stack.name}\n`,
        },
      ],
    }),
  ],
});
