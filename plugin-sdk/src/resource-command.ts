// CLI commands built from the routes that serve them: a resource's `list`, `get`, `add`, `update`,
// `remove`, `enable`, `disable` and custom actions are declarations (a route and how to show its
// answer), not files of fetch calls. Arguments and options come from the route's schemas (path
// parameters are positional arguments; query and body fields are options typed from their
// schemas), every action takes `--output table|json|yaml` and `--master-url`, live data `--watch`,
// streams `--follow`, and every error goes through the master client's one mapping (message and
// exit code). An action on the local data directory (no route: `local`) is shown the same way.
import type { TSchema } from '@sinclair/typebox';
import type { CommandArgument, CommandContext, CommandInput, CommandOption, CommandSpec } from './commands.js';
import { isRunnerError } from './errors.js';
import { InvalidInputError } from './errors.js';
import { formatTable } from './format.js';
import type { RouteAnswer, RouteDeclaration } from './http.js';
import { MASTER_URL_OPTION, connectMaster, type MasterClient } from './master-client.js';
import { formatYaml } from './yaml-output.js';

/** A column of a list's table: its header and how to show a row's value. */
export interface ResourceColumn {
  header: string;
  /** The row's field (default: the header lower-cased, spaces as underscores). */
  field?: string;
  value?: (row: Record<string, unknown>) => unknown;
}

type AnyRoute = RouteDeclaration<any, any, any>;
type Row = Record<string, any>;

/**
 * One subcommand: the route it calls (or, for a command on the local data directory, `local`) and
 * how its answer is shown. Declare it with `resourceAction(route, {...})` for `text` and the other
 * callbacks to get the answer typed from the route's response schema.
 */
export interface ResourceAction<D extends AnyRoute = AnyRoute, A = D extends AnyRoute ? any : never> {
  /** `list`, `get`, `add`, `update`, `remove`, `enable`, `disable`, or a custom verb. */
  name: string;
  route?: D;
  /**
   * Instead of a route: the answer computed here (the local data directory, a file), shown and
   * exited from as a master's answer would be. Its arguments and options are `arguments`/`options`.
   */
  local?: (input: ActionInput, ctx: CommandContext) => Promise<A> | A;
  /** Default: the route's summary. */
  description?: string;
  aliases?: string[];
  /** Arguments of a `local` action. */
  arguments?: CommandArgument[];
  /** Options beyond those of the route's fields (`--password-file`), read by `body` or `local`. */
  options?: CommandOption[];
  /** Body fields computed from the input before the call (a password read from a file or stdin). */
  body?: (input: ActionInput, ctx: CommandContext) => Promise<Record<string, unknown>> | Record<string, unknown>;
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
  /** A row as one line of text: a list printed as lines instead of a table, and `--follow`'s rows. */
  line?: (row: Row) => string;
  /** What table output prints (default: a list as a table, a record as `field: value` lines). */
  text?: (
    answer: A,
    input: ActionInput,
    /** The master called (none for a `local` action). */
    master: MasterClient,
    ctx: CommandContext,
  ) => string | Promise<string>;
  /** Done with the answer whatever the output format (keep a login's token). */
  after?: (answer: A, input: ActionInput, master: MasterClient, ctx: CommandContext) => Promise<void> | void;
  /** Printed on stderr after the answer in table output (stdout holding only the value to capture). */
  note?: (answer: A, input: ActionInput) => string;
  /** Redraws the answer every `--interval` seconds until interrupted (data that changes). */
  watch?: boolean | { intervalSeconds?: number; line?: (answer: A) => string };
  /**
   * With `--follow`, after the first answer's rows (printed oldest first when `newestFirst`), the
   * rows that come later, one line each (one JSON object each with `--output json`), until Ctrl-C.
   */
  follow?: {
    description: string;
    newestFirst?: boolean;
    rows: (from: { master: MasterClient; input: ActionInput; answer: A; signal: AbortSignal }) => AsyncIterable<Row>;
  };
  /** The exit code for an answer (default 0). */
  exitCode?: (answer: A) => number;
  /** Short flags of field options: `{ description: '-d' }` gives `-d, --description <value>`. */
  short?: Record<string, string>;
  /** Query or body fields the command does not offer (a field that changes the answer's format). */
  omit?: string[];
  /** Milliseconds the call may take (default the client's 30 s). */
  timeoutMs?: number;
}

/** An action on `route`, its callbacks typed with the route's answer. */
export function resourceAction<D extends AnyRoute>(
  route: D,
  action: Omit<ResourceAction<D, RouteAnswer<D>>, 'route' | 'local'>,
): ResourceAction {
  return { ...action, route } as ResourceAction;
}

/** An action on the local data directory: `local` computes the answer, shown as a master's would be. */
export function localAction<A>(
  action: Omit<ResourceAction<AnyRoute, A>, 'route' | 'local'> & {
    local: (input: ActionInput, ctx: CommandContext) => Promise<A> | A;
  },
): ResourceAction {
  return action as unknown as ResourceAction;
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

const watchOptions = (intervalSeconds = 2): CommandOption[] => [
  {
    flags: '-w, --watch',
    description: 'show the answer again every --interval seconds until Ctrl-C (a line each when not on a terminal)',
  },
  {
    flags: '--interval <seconds>',
    description: 'seconds between two answers with --watch',
    default: String(intervalSeconds),
    parse: (value: string) => positiveNumber(value, 'interval'),
  },
  {
    flags: '--count <n>',
    description: 'stop after n answers with --watch',
    parse: (value: string) => positiveNumber(value, 'count', true),
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
  if (!route) {
    if (!action.local) throw new TypeError(`resource action ${action.name}: give a route or local`);
    return {
      name: action.name,
      description: action.description ?? action.name,
      ...(action.aliases ? { aliases: action.aliases } : {}),
      arguments: action.arguments ?? [],
      options: [...(action.options ?? []), OUTPUT_OPTION, ...modeOptions(action)],
      run: (input, ctx) => runAction(action, input, ctx),
    };
  }
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
    options: [...fieldOptions, ...(action.options ?? []), OUTPUT_OPTION, ...modeOptions(action), MASTER_URL_OPTION],
    run: (input, ctx) => runAction(action, input, ctx),
  };
}

function modeOptions(action: ResourceAction): CommandOption[] {
  const watchSeconds = typeof action.watch === 'object' ? action.watch.intervalSeconds : undefined;
  return [
    ...(action.watch ? watchOptions(watchSeconds) : []),
    ...(action.follow ? [{ flags: '-f, --follow', description: action.follow.description }] : []),
  ];
}

async function runAction(action: ResourceAction, input: CommandInput, ctx: CommandContext): Promise<number> {
  const master = action.route ? await connectMaster(ctx, input.options.masterUrl) : undefined;
  const request = action.route
    ? requestOf(action, input)
    : { path: '', input: { args: namedArgs(action.arguments ?? [], input.args), rest: [], options: input.options } };
  const format = (input.options.output === 'text' ? 'table' : (input.options.output ?? 'table')) as OutputFormat;
  const ask = async (): Promise<unknown> => {
    if (!master) return action.local!(request.input, ctx);
    const extra = action.body ? await action.body(request.input, ctx) : undefined;
    const body = extra ? { ...request.body, ...extra } : request.body;
    return master.call<unknown>(action.route!.method, request.path, {
      ...(body === undefined ? {} : { body }),
      ...(action.timeoutMs === undefined ? {} : { timeoutMs: action.timeoutMs }),
    });
  };
  if (action.watch && input.options.watch === true) {
    const line = typeof action.watch === 'object' ? action.watch.line : undefined;
    const seconds = Number(
      input.options.interval ?? (typeof action.watch === 'object' ? action.watch.intervalSeconds : 2) ?? 2,
    );
    const footer = `\nevery ${seconds} s${master ? ` from ${master.endpoint.base}` : ''}; Ctrl-C stops\n`;
    return watch(ask, ctx, {
      intervalMs: seconds * 1000,
      count: input.options.count === undefined ? Infinity : Number(input.options.count),
      // A terminal gets the whole view redrawn; a pipe one line (or JSON object) per answer.
      show: async (answer) =>
        ctx.isTTY && format === 'table'
          ? `\x1b[H\x1b[2J${await render(action, answer, format, request.input, master, ctx)}${footer}`
          : format === 'json'
            ? `${JSON.stringify(answer ?? null)}\n`
            : line && format === 'table'
              ? line(answer)
              : `${await render(action, answer, format, request.input, master, ctx)}\n`,
    });
  }
  const answer = await ask();
  await action.after?.(answer, request.input, master as MasterClient, ctx);
  if (action.follow && input.options.follow === true && master)
    return follow(action, answer, { master, input: request.input, ctx, format });
  ctx.stdout.write(await render(action, answer, format, request.input, master, ctx));
  if (action.note && format === 'table') ctx.stderr.write(action.note(answer, request.input));
  return action.exitCode?.(answer) ?? 0;
}

/** `--follow`: the first answer's rows as lines, then each later row, until SIGINT or SIGTERM. */
async function follow(
  action: ResourceAction,
  answer: unknown,
  from: { master: MasterClient; input: ActionInput; ctx: CommandContext; format: OutputFormat },
): Promise<number> {
  const { ctx, format } = from;
  const print = (row: Row) =>
    ctx.stdout.write(format === 'table' && action.line ? action.line(row) : `${JSON.stringify(row)}\n`);
  const first = rowsOf(action, answer) ?? [];
  for (const row of action.follow!.newestFirst ? [...first].reverse() : first) print(row);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  try {
    for await (const row of action.follow!.rows({
      master: from.master,
      input: from.input,
      answer,
      signal: stop.signal,
    })) {
      if (stop.signal.aborted) break;
      print(row);
    }
  } catch (error) {
    if (!stop.signal.aborted) throw error;
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  }
  return 0;
}

/**
 * Shows the answer again every interval until SIGINT or SIGTERM or `count` answers. A failed call
 * is shown on stderr and the watch goes on (a master restarting), except for a 404: what is
 * watched is gone. A watch that never got an answer exits 1.
 */
async function watch(
  ask: () => Promise<unknown>,
  ctx: CommandContext,
  options: { intervalMs: number; count: number; show: (answer: unknown) => Promise<string> },
): Promise<number> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  let answers = 0;
  let failures = 0;
  try {
    for (let taken = 0; taken < options.count && !stop.signal.aborted; taken++) {
      if (taken > 0) await pause(options.intervalMs, stop.signal);
      if (stop.signal.aborted) break;
      try {
        ctx.stdout.write(await options.show(await ask()));
        answers += 1;
      } catch (error) {
        if (isRunnerError(error) && error.status === 404) throw error;
        failures += 1;
        ctx.stderr.write(`${new Date().toISOString()} ${error instanceof Error ? error.message : String(error)}\n`);
      }
    }
    return answers === 0 && failures > 0 ? 1 : 0;
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((done) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), done()), { once: true });
  });
}

function namedArgs(declared: readonly CommandArgument[], args: readonly string[]): Record<string, string> {
  const named: Record<string, string> = {};
  declared.forEach((arg, i) => {
    if (args[i] !== undefined) named[arg.name] = args[i];
  });
  return named;
}

/**
 * Calls a declared route on the master, the answer typed from its response schema: a command
 * that is not a resource action still types nothing by hand.
 */
export function callRoute<D extends AnyRoute>(
  master: MasterClient,
  route: D,
  request: {
    params?: Record<string, string>;
    query?: Record<string, string | number | boolean | undefined>;
    body?: unknown;
    signal?: AbortSignal;
    timeoutMs?: number;
  } = {},
): Promise<RouteAnswer<D>> {
  const path = route.path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) =>
    encodeURIComponent(request.params?.[name] ?? ''),
  );
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(request.query ?? {}))
    if (value !== undefined) query.set(name, String(value));
  const search = query.toString();
  return master.call<RouteAnswer<D>>(route.method, search === '' ? path : `${path}?${search}`, {
    ...(request.body === undefined ? {} : { body: request.body }),
    ...(request.signal ? { signal: request.signal } : {}),
    ...(request.timeoutMs === undefined ? {} : { timeoutMs: request.timeoutMs }),
  });
}

/** The call an action makes: the path with its parameters and query, and the body. */
export function requestOf(
  action: ResourceAction,
  { args, options }: CommandInput,
): { path: string; body?: Record<string, unknown>; input: ActionInput } {
  const route = action.route!;
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
  master: MasterClient | undefined,
  ctx: CommandContext,
): Promise<string> {
  if (format === 'json') return `${JSON.stringify(answer ?? null, null, 2)}\n`;
  if (format === 'yaml') return formatYaml(answer ?? null);
  if (action.text) return action.text(answer, input, master as MasterClient, ctx);
  const rows = rowsOf(action, answer);
  if (rows && action.line) return rows.length === 0 ? `${action.empty ?? 'none'}\n` : rows.map(action.line).join('');
  if (rows) return tableOf(rows, action);
  if (answer === undefined) return '';
  return recordText(answer as Record<string, unknown>);
}

function rowsOf(action: ResourceAction, answer: unknown): Row[] | undefined {
  const rows = action.rows ? (answer as Record<string, unknown> | undefined)?.[action.rows] : answer;
  return Array.isArray(rows) ? (rows as Row[]) : undefined;
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

function positiveNumber(value: string, field: string, integer = false): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
    throw new InvalidInputError(
      `--${field}: "${value}" is not ${integer ? 'a whole number greater than 0' : 'a positive number of seconds'}`,
      { field },
    );
  return n;
}
