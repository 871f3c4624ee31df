// CLI commands built from the routes that serve them: a resource's `list`, `get`, `add`, `update`,
// `remove`, `enable`, `disable` and custom actions are declarations (a route and how to show its
// answer), not files of fetch calls. Arguments and options come from the route's schemas (path
// parameters are positional arguments; query and body fields are options typed from their
// schemas), every action takes `--output table|json|yaml` and `--master-url`, lists of live data
// `--watch`, and every error goes through the master client's one mapping (message and exit code).
import type { TSchema } from '@sinclair/typebox';
import type { CommandArgument, CommandContext, CommandInput, CommandOption, CommandSpec } from './commands.js';
import { InvalidInputError } from './errors.js';
import { formatTable } from './format.js';
import type { RouteDeclaration } from './http.js';
import { MASTER_URL_OPTION, connectMaster, type MasterClient } from './master-client.js';
import { formatYaml } from './yaml-output.js';

/** A column of a list's table: its header and how to show a row's value. */
export interface ResourceColumn {
  header: string;
  /** The row's field (default: the header lower-cased, spaces as underscores). */
  field?: string;
  value?: (row: Record<string, unknown>) => unknown;
}

/** One subcommand: the route it calls and how its answer is shown. */
export interface ResourceAction {
  /** `list`, `get`, `add`, `update`, `remove`, `enable`, `disable`, or a custom verb. */
  name: string;
  route: RouteDeclaration<any, any, any>;
  /** Default: the route's summary. */
  description?: string;
  aliases?: string[];
  /** Body fields taken, in order, as positional arguments after the path parameters. */
  positional?: string[];
  /** A body field (an array) filled by every remaining argument (`agents...`). */
  rest?: { field: string; description: string; required?: boolean };
  /** A query field filled by every remaining argument, joined with commas (`?agents=a,b`). */
  restQuery?: { field: string; description: string };
  /** Where a list's rows sit in the answer (`groups`); the answer itself when it is an array. */
  rows?: string;
  /** A list's table columns; default: the scalar fields of its rows. */
  columns?: ResourceColumn[];
  /** Printed for an empty list in table output. */
  empty?: string;
  /** What table output prints (default: a list as a table, a record as `field: value` lines). */
  text?: (answer: any, input: ActionInput, master: MasterClient) => string | Promise<string>;
  /** Redraws the answer every `--interval` seconds until interrupted (data that changes). */
  watch?: boolean;
  /** The exit code for an answer (default 0). */
  exitCode?: (answer: any) => number;
  /** Short flags of field options: `{ description: '-d' }` gives `-d, --description <value>`. */
  short?: Record<string, string>;
  /** Query or body fields the command does not offer (a field that changes the answer's format). */
  omit?: string[];
  /** Milliseconds the call may take (default the client's 30 s). */
  timeoutMs?: number;
}

/** What an action's `text` sees: the arguments by name and the options. */
export interface ActionInput {
  args: Record<string, string>;
  rest: string[];
  options: Record<string, unknown>;
}

/** A resource's command: `runner <name> <action> ...`. */
export interface ResourceCommandSpec {
  name: string;
  description: string;
  aliases?: string[];
  actions: ResourceAction[];
  /** Subcommands that are not actions on a route (merged as they are). */
  subcommands?: CommandSpec[];
}

export const OUTPUT_FORMATS = ['table', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** `-o, --output table|json|yaml`, the same on every command (`text` is read as `table`). */
export const OUTPUT_OPTION: Readonly<CommandOption> = Object.freeze({
  flags: '-o, --output <format>',
  description: 'table, json or yaml',
  default: 'table',
  parse: (value: string) => {
    const format = value === 'text' ? 'table' : value;
    if (!(OUTPUT_FORMATS as readonly string[]).includes(format))
      throw new InvalidInputError(`--output: "${value}" is not one of ${OUTPUT_FORMATS.join(', ')}`, {
        field: 'output',
      });
    return format;
  },
});

const WATCH_OPTIONS: readonly CommandOption[] = [
  { flags: '-w, --watch', description: 'show the answer again every --interval seconds until Ctrl-C' },
  {
    flags: '--interval <seconds>',
    description: 'seconds between two answers with --watch',
    default: '2',
    parse: (value: string) => positiveNumber(value, 'interval'),
  },
];

/** Builds `runner <resource> ...` from its actions. */
export function resourceCommand(spec: ResourceCommandSpec): CommandSpec {
  return {
    name: spec.name,
    description: spec.description,
    ...(spec.aliases ? { aliases: spec.aliases } : {}),
    subcommands: [...spec.actions.map(actionCommand), ...(spec.subcommands ?? [])],
  };
}

/** One action as a command: arguments and options from the route's schemas. */
export function actionCommand(action: ResourceAction): CommandSpec {
  const { route } = action;
  const params = pathParams(route.path);
  const bodyFields = fieldsOf(route.body);
  const queryFields = fieldsOf(route.query);
  const positional = action.positional ?? [];
  const taken = new Set([...positional, action.rest?.field, action.restQuery?.field, ...(action.omit ?? [])]);
  const argumentsOf: CommandArgument[] = [
    ...params.map((name) => ({ name, description: describe(route.params, name), required: true })),
    ...positional.map((name) => ({
      name,
      description: describe(route.body, name),
      required: bodyFields.required.has(name),
    })),
  ];
  const rest = action.rest ?? action.restQuery;
  if (rest)
    argumentsOf.push({
      name: rest.field,
      description: rest.description,
      required: action.rest?.required ?? false,
      variadic: true,
    });
  const fieldOptions = [
    ...queryFields.names.filter((n) => !taken.has(n)).map((n) => fieldOption(route.query!, n, 'query', action.short)),
    ...bodyFields.names.filter((n) => !taken.has(n)).map((n) => fieldOption(route.body!, n, 'body', action.short)),
  ];
  return {
    name: action.name,
    description: action.description ?? route.summary,
    ...(action.aliases ? { aliases: action.aliases } : {}),
    arguments: argumentsOf,
    options: [...fieldOptions, OUTPUT_OPTION, ...(action.watch ? WATCH_OPTIONS : []), MASTER_URL_OPTION],
    run: (input, ctx) => runAction(action, input, ctx),
  };
}

async function runAction(action: ResourceAction, input: CommandInput, ctx: CommandContext): Promise<number> {
  const master = await connectMaster(ctx, input.options.masterUrl);
  const request = requestOf(action, input);
  const format = (input.options.output ?? 'table') as OutputFormat;
  const once = async (): Promise<{ text: string; code: number }> => {
    const answer = await master.call<unknown>(action.route.method, request.path, {
      ...(request.body === undefined ? {} : { body: request.body }),
      ...(action.timeoutMs === undefined ? {} : { timeoutMs: action.timeoutMs }),
    });
    return { text: await render(action, answer, format, request.input, master), code: action.exitCode?.(answer) ?? 0 };
  };
  if (!(action.watch && input.options.watch === true)) {
    const { text, code } = await once();
    ctx.stdout.write(text);
    return code;
  }
  return watch(once, ctx, Number(input.options.interval) * 1000);
}

/** Shows the answer again every interval until SIGINT or SIGTERM; a terminal is cleared first. */
async function watch(
  once: () => Promise<{ text: string; code: number }>,
  ctx: CommandContext,
  intervalMs: number,
): Promise<number> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  try {
    while (!stop.signal.aborted) {
      const { text } = await once();
      ctx.stdout.write(ctx.isTTY ? `\x1b[H\x1b[2J${text}` : `${text}\n`);
      await new Promise<void>((done) => {
        const timer = setTimeout(done, intervalMs);
        stop.signal.addEventListener('abort', () => (clearTimeout(timer), done()), { once: true });
      });
    }
    return 0;
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  }
}

/** The call an action makes: the path with its parameters and query, and the body. */
export function requestOf(
  action: ResourceAction,
  { args, options }: CommandInput,
): { path: string; body?: Record<string, unknown>; input: ActionInput } {
  const { route } = action;
  const params = pathParams(route.path);
  const positional = action.positional ?? [];
  const named: Record<string, string> = {};
  [...params, ...positional].forEach((name, i) => {
    if (args[i] !== undefined) named[name] = args[i];
  });
  const rest = args.slice(params.length + positional.length);
  const path = route.path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => encodeURIComponent(named[name] ?? ''));
  const query = new URLSearchParams();
  for (const name of fieldsOf(route.query).names.filter((n) => !action.omit?.includes(n))) {
    const value = options[camel(name)];
    if (value !== undefined) query.set(name, Array.isArray(value) ? value.join(',') : String(value));
  }
  if (action.restQuery && rest.length > 0) query.set(action.restQuery.field, rest.join(','));
  const search = query.toString();
  let body: Record<string, unknown> | undefined;
  if (route.body) {
    body = {};
    for (const name of positional) if (named[name] !== undefined) body[name] = named[name];
    if (action.rest) body[action.rest.field] = rest;
    for (const name of fieldsOf(route.body).names.filter((n) => !action.omit?.includes(n))) {
      const value = options[camel(name)];
      if (value !== undefined && !(name in body)) body[name] = value;
    }
  }
  return { path: search === '' ? path : `${path}?${search}`, body, input: { args: named, rest, options } };
}

/** The answer in the chosen format. */
async function render(
  action: ResourceAction,
  answer: unknown,
  format: OutputFormat,
  input: ActionInput,
  master: MasterClient,
): Promise<string> {
  if (format === 'json') return `${JSON.stringify(answer ?? null, null, 2)}\n`;
  if (format === 'yaml') return formatYaml(answer ?? null);
  if (action.text) return action.text(answer, input, master);
  const rows = action.rows ? (answer as Record<string, unknown>)[action.rows] : answer;
  if (Array.isArray(rows)) return tableOf(rows as Record<string, unknown>[], action);
  if (answer === undefined) return '';
  return recordText(answer as Record<string, unknown>);
}

function tableOf(rows: Record<string, unknown>[], action: ResourceAction): string {
  if (rows.length === 0) return `${action.empty ?? 'none'}\n`;
  const columns: ResourceColumn[] =
    action.columns ??
    Object.keys(rows[0])
      .filter((key) => isScalar(rows[0][key]))
      .map((key) => ({ header: key.toUpperCase(), field: key }));
  return formatTable(
    columns.map((c) => c.header),
    rows.map((row) =>
      columns.map((c) => cell(c.value ? c.value(row) : row[c.field ?? c.header.toLowerCase().replace(/ /g, '_')])),
    ),
  );
}

/** A record as aligned `field: value` lines; nested values as compact JSON. */
export function recordText(record: Record<string, unknown>): string {
  const keys = Object.keys(record);
  const width = Math.max(0, ...keys.map((k) => k.length)) + 1;
  return keys.map((k) => `${`${k}:`.padEnd(width)} ${cell(record[k])}`.trimEnd()).join('\n') + '\n';
}

function cell(value: unknown): string {
  if (value === undefined || value === null || value === '') return '-';
  if (Array.isArray(value) && value.every(isScalar)) return value.length === 0 ? '-' : value.join(',');
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function isScalar(value: unknown): boolean {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

/** `/agents/:name/exec` to `['name']`. */
function pathParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
}

function fieldsOf(schema: TSchema | undefined): { names: string[]; required: Set<string> } {
  const properties = (schema?.properties ?? {}) as Record<string, TSchema>;
  return { names: Object.keys(properties), required: new Set((schema?.required as string[] | undefined) ?? []) };
}

function describe(schema: TSchema | undefined, name: string): string {
  const property = (schema?.properties as Record<string, TSchema> | undefined)?.[name];
  const text = typeof property?.description === 'string' ? property.description : name.replace(/_/g, ' ');
  // The master's default, which applies when the option is not given.
  return property?.default === undefined ? text : `${text} (default ${JSON.stringify(property.default)})`;
}

/** `snake_case` to `camelCase`, as commander names the option `--snake-case`. */
function camel(name: string): string {
  return name.replace(/[_-]([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** A query or body field as an option typed from its schema. */
function fieldOption(
  schema: TSchema,
  name: string,
  where: 'query' | 'body',
  short: Record<string, string> = {},
): CommandOption {
  const property = (schema.properties as Record<string, TSchema>)[name];
  const long = `--${name.replace(/_/g, '-')}`;
  const flag = short[name] ? `${short[name]}, ${long}` : long;
  const description = describe(schema, name);
  const type = typeOf(property);
  if (type === 'boolean')
    // A query's boolean travels as text; a body's as JSON true.
    return { flags: flag, description };
  const choices = literalChoices(property);
  const option: CommandOption = { flags: `${flag} <value>`, description, ...(choices ? { choices } : {}) };
  if (type === 'integer' || type === 'number')
    option.parse = (value: string) => {
      const n = Number(value);
      if (value.trim() === '' || !Number.isFinite(n) || (type === 'integer' && !Number.isInteger(n)))
        throw new InvalidInputError(`${long}: "${value}" is not ${type === 'integer' ? 'an integer' : 'a number'}`, {
          field: name,
        });
      return n;
    };
  else if (type === 'array' && where === 'body')
    option.parse = (value: string) =>
      value
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean);
  return option;
}

function typeOf(schema: TSchema): string | undefined {
  if (typeof schema.type === 'string') return schema.type;
  const variants = (schema.anyOf ?? schema.oneOf) as TSchema[] | undefined;
  const types = new Set(variants?.map((v) => v.type as string | undefined).filter((t) => t !== 'null'));
  return types.size === 1 ? [...types][0] : undefined;
}

function literalChoices(schema: TSchema): string[] | undefined {
  const variants = (schema.anyOf ?? schema.oneOf) as TSchema[] | undefined;
  const values = variants?.map((v) => v.const as unknown);
  return values && values.length > 0 && values.every((v) => typeof v === 'string') ? (values as string[]) : undefined;
}

function positiveNumber(value: string, field: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new InvalidInputError(`--${field}: "${value}" is not a positive number of seconds`, { field });
  return n;
}
