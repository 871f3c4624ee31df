import { readFile } from 'node:fs/promises';
import {
  InvalidInputError,
  resourceAction,
  resourceCommand,
  type ActionInput,
  type CommandSpec,
} from '@runner/plugin-sdk';
import * as api from './api.js';

const collect = (value: string, previous: unknown) => [...((previous as string[] | undefined) ?? []), value];
const percent = (rate: unknown) => (typeof rate === 'number' ? `${Math.round(rate * 100)}%` : '-');

async function readText(path: unknown, option: string): Promise<string> {
  if (typeof path !== 'string' || path === '')
    throw new InvalidInputError(`give the file with ${option} <path>`, { field: option.replace(/^--/, '') });
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InvalidInputError(`${option} ${path}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`, {
      field: option.replace(/^--/, ''),
    });
  }
}

/** `--concurrency 2:queue` (limit and behavior), or `none` to lift the limit. */
function parseConcurrency(value: string): { limit: number; behavior: string } | null {
  if (value === 'none') return null;
  const match = /^(\d+):(queue|skip|cancel_oldest)$/.exec(value.trim());
  if (!match)
    throw new InvalidInputError(
      `--concurrency: "${value}" is not <limit>:<queue|skip|cancel_oldest> (2:queue) or none`,
      { field: 'concurrency' },
    );
  return { limit: Number(match[1]), behavior: match[2] as string };
}

/** `--var k=v` (repeatable) as the run's vars. */
function parseVars(args: unknown): Record<string, string> | undefined {
  const list = (args as string[] | undefined) ?? [];
  if (list.length === 0) return undefined;
  return Object.fromEntries(
    list.map((arg) => {
      const at = arg.indexOf('=');
      if (at <= 0) throw new InvalidInputError(`--var ${arg}: expected key=value`, { field: 'var' });
      return [arg.slice(0, at), arg.slice(at + 1)];
    }),
  );
}

const fileOption = { flags: '-f, --file <path>', description: 'the workflow YAML file (kept byte for byte)' };
const concurrencyOption = {
  flags: '--concurrency <limit:behavior>',
  description: 'runs at once across masters and what happens beyond: 2:queue, 1:skip, 1:cancel_oldest, or none',
};

/** The YAML and concurrency a save sends, read from `--file` and `--concurrency`. */
async function saveBody(input: ActionInput, yamlRequired: boolean) {
  const body: Record<string, unknown> = {};
  if (yamlRequired || input.options.file !== undefined) body.yaml = await readText(input.options.file, '--file');
  if (typeof input.options.concurrency === 'string') body.concurrency = parseConcurrency(input.options.concurrency);
  return body;
}

function flowText(flow: Record<string, any>, showPath: boolean): string {
  const stats = flow.stats as Record<string, any>;
  let text = `name:        ${flow.name}\n`;
  if (showPath) text += `path:        ${flow.name}.yaml@${flow.version} (what problems and runs name)\n`;
  text += `description: ${flow.description || '-'}\ntags:        ${(flow.tags as string[]).join(', ') || '-'}\n`;
  text += `active:      ${flow.active ? 'yes' : 'no'}\nversion:     ${flow.version}\n`;
  text += `concurrency: ${flow.concurrency ? `${flow.concurrency.limit} (${flow.concurrency.behavior})` : 'no limit'}\n`;
  text += `runs:        ${stats.executions} (success ${percent(stats.success_rate)}, average ${stats.average_duration === null ? '-' : `${stats.average_duration.toFixed(1)}s`})\n`;
  text += `last run:    ${stats.last_execution ? `${stats.last_execution.run_id} ${stats.last_execution.status} at ${stats.last_execution.at}` : '-'}\n`;
  text += `updated:     ${flow.updated_at}\n---\n${flow.yaml}`;
  return text.endsWith('\n') ? text : `${text}\n`;
}

const saved = (verb: string) => (flow: { name: string; version: number }) =>
  `flow ${flow.name} ${verb} (version ${flow.version})\n`;

/** `runner flow ...`: each subcommand is one of the plugin's routes (api.ts). */
export const flowCommand: CommandSpec = resourceCommand({
  name: 'flow',
  description: 'saved workflows (flows): versions, diff, restore, clone, export and import, run',
  actions: [
    resourceAction(api.getFlows, {
      name: 'list',
      aliases: ['ls'],
      description: 'list the saved flows with their statistics',
      rows: 'flows',
      empty: 'no flows (save one with runner flow add <name> --file workflow.yaml)',
      columns: [
        { header: 'NAME', field: 'name' },
        { header: 'ACTIVE', value: (f) => (f.active ? 'yes' : 'no') },
        { header: 'VERSION', field: 'version' },
        { header: 'TAGS', value: (f) => (f.tags as string[]).join(',') || '-' },
        { header: 'RUNS', value: (f) => (f.stats as { executions: number }).executions },
        { header: 'SUCCESS', value: (f) => percent((f.stats as { success_rate: unknown }).success_rate) },
        {
          header: 'LAST RUN',
          value: (f) => (f.stats as { last_execution?: { at: string } }).last_execution?.at ?? '-',
        },
      ],
    }),
    resourceAction(api.postFlows, {
      name: 'add',
      description: 'save a new flow from a workflow file (validated as runner run would)',
      positional: ['name'],
      omit: ['yaml', 'concurrency'],
      short: { description: '-d', message: '-m' },
      options: [fileOption, concurrencyOption],
      body: (input) => saveBody(input, true),
      text: saved('saved'),
    }),
    resourceAction(api.getFlowsName, {
      name: 'get',
      aliases: ['show'],
      description: "a flow's fields, statistics and current YAML",
      options: [{ flags: '--show-path', description: 'also show the path its problems and runs are named by' }],
      text: (flow, input) => flowText(flow as Record<string, unknown>, input.options.showPath === true),
    }),
    resourceAction(api.putFlowsName, {
      name: 'update',
      description: 'change a flow; a new --file makes a new version (refused if --base-version is not the current one)',
      omit: ['yaml', 'concurrency'],
      short: { description: '-d', message: '-m' },
      options: [fileOption, concurrencyOption],
      body: (input) => saveBody(input, false),
      text: saved('saved'),
    }),
    resourceAction(api.deleteFlowsName, {
      name: 'remove',
      aliases: ['rm'],
      text: (_answer, input) => `flow ${input.args.name} removed\n`,
    }),
    resourceAction(api.postFlowsNameActivate, { name: 'activate', text: (f) => `flow ${f.name} is active\n` }),
    resourceAction(api.postFlowsNameDeactivate, { name: 'deactivate', text: (f) => `flow ${f.name} is inactive\n` }),
    resourceAction(api.getFlowsNameVersions, {
      name: 'history',
      description: "a flow's versions, newest first",
      rows: 'versions',
      columns: [
        { header: 'VERSION', field: 'version' },
        { header: 'SAVED', field: 'created_at' },
        { header: 'AUTHOR', field: 'author' },
        { header: 'COMMIT', value: (v) => (typeof v.commit === 'string' ? v.commit.slice(0, 12) : '') },
        { header: 'MESSAGE', field: 'message' },
      ],
    }),
    resourceAction(api.getFlowsNameDiff, {
      name: 'diff',
      description: 'the diff of two versions (default: the current one and the one before)',
      text: (diff) => diff.unified,
    }),
    resourceAction(api.postFlowsNameRestore, {
      name: 'restore',
      description: "make an old version's YAML the new current version",
      positional: ['version'],
      // A positional argument arrives as text; the route takes a number.
      body: (input) => ({ version: Number(input.args.version) }),
      text: (flow, input) => `flow ${flow.name}: version ${input.args.version} restored as version ${flow.version}\n`,
    }),
    resourceAction(api.postFlowsNameClone, {
      name: 'clone',
      description: 'copy a flow under a new name (inactive, version 1)',
      positional: ['new_name'],
      text: saved('created'),
    }),
    resourceAction(api.postFlowsExport, {
      name: 'export',
      description: 'write flows (all, or those named) as one JSON document to stdout; --history for every version',
      rest: { field: 'names', description: 'flow names (default: every flow)' },
      text: (document) => `${JSON.stringify(document, null, 2)}\n`,
    }),
    resourceAction(api.postFlowsImport, {
      name: 'import',
      description: 'import an export document, all or nothing',
      omit: ['format', 'format_version', 'exported_at', 'flows'],
      options: [{ flags: '-f, --file <path>', description: 'the document runner flow export wrote' }],
      body: async (input) => {
        const text = await readText(input.options.file, '--file');
        try {
          return JSON.parse(text) as Record<string, unknown>;
        } catch (error) {
          throw new InvalidInputError(`--file ${String(input.options.file)}: not JSON: ${(error as Error).message}`, {
            field: 'file',
          });
        }
      },
      text: (answer) => `imported ${answer.imported.length} flow(s): ${answer.imported.join(', ')}\n`,
    }),
    resourceAction(api.postFlowsNameRun, {
      name: 'run',
      description: 'start a flow under its concurrency (runner run <name> follows the run)',
      omit: ['vars'],
      options: [{ flags: '--var <key=value>', description: 'set a workflow var (repeatable)', parse: collect }],
      body: (input) => {
        const vars = parseVars(input.options.var);
        return vars ? { vars } : {};
      },
      text: (answer) => {
        const note = answer.inactive ? ' (the flow is inactive: a manual run)' : '';
        if (answer.outcome === 'started')
          return `run ${answer.id} of flow ${answer.flow}@${answer.version} started${note}\n`;
        if (answer.outcome === 'queued')
          return `flow ${answer.flow} is at its limit: the run is queued (${answer.queue_id})\n`;
        return `nothing ran: ${answer.reason}\n`;
      },
    }),
  ],
});
