import { readFile, stat } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { basename, extname } from 'node:path';
import {
  createMasterClient,
  findMaster,
  InvalidInputError,
  FlowsRef,
  WorkflowEngineRef,
  WorkflowParserRef,
  type CommandContext,
  type CommandInput,
  type RunRecord,
  type RunRequest,
} from '@runner/plugin-sdk';
import { confirmationQuestion, delegationSummary } from './delegation-summary.js';
import { followOnMaster, runOnMaster, withInterrupt } from './run-on-master.js';
import { runViewFor } from './run-view.js';
import { parse } from 'yaml';

export interface RunOptions {
  file?: string;
  /** A saved flow's version (`runner run <flow> --version n`). */
  version?: string;
  group?: string;
  values?: string;
  var?: string[];
  delegateTo?: string[];
  forks?: string;
  dryRun?: boolean;
  verbose?: boolean;
  yes?: boolean;
  stack?: string;
  output: 'text' | 'json';
}

/**
 * What to run: `runner run workflow.yaml` (a path: the file, named after it), `runner run name
 * --file workflow.yaml` (the file, recorded under that name). A bare word that is no file is a
 * saved flow's name (the flows plugin answers whether it exists).
 */
export async function workflowSource(
  argument: string | undefined,
  fileOption: string | undefined,
): Promise<{ file: string; name?: string } | { flow: string }> {
  if (fileOption) return { file: fileOption, ...(argument === undefined ? {} : { name: argument }) };
  if (argument !== undefined && (/\.ya?ml$/i.test(argument) || argument.includes('/') || (await isFile(argument))))
    return { file: argument };
  if (argument === undefined)
    throw new InvalidInputError(
      'give the workflow file or a saved flow: runner run workflow.yaml, runner run <flow> (or runner run <name> --file workflow.yaml)',
      { field: 'file' },
    );
  return { flow: argument };
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}

/**
 * `runner run`: validates, asks before delegating (on a terminal, without --yes), runs with a live
 * view, and exits 0 only when no task failed. A master holding the data directory runs it instead.
 */
export async function runWorkflowCommand(input: CommandInput, ctx: CommandContext): Promise<number> {
  const options = input.options as unknown as RunOptions;
  const what = await workflowSource(input.args[0], options.file);
  if (options.version !== undefined && !('flow' in what))
    throw new InvalidInputError('--version runs a version of a saved flow: runner run <flow> --version n', {
      field: 'version',
    });
  // A master named by RUNNER_MASTER_URL, one holding this data directory, or one named by
  // RUNNER_MASTER_ADDR runs it; with none, it runs embedded in this process.
  const { endpoint: master } = await findMaster(ctx);
  if ('flow' in what) return runSavedFlow(what.flow, options, ctx, master);
  const { file, name } = what;
  const kernel = master ? undefined : await ctx.boot('embedded');
  const parser = kernel?.get(WorkflowParserRef);

  const request: RunRequest = {
    source: { file },
    workflowName: name,
    group: options.group,
    vars: parser ? parser.parseVarArguments(options.var ?? []) : parseVarsLoosely(options.var ?? []),
    values: options.values ? await readValues(options.values, parser) : undefined,
    delegateTo: options.delegateTo,
    ...(options.forks === undefined ? {} : { forks: parseForks(options.forks) }),
    dryRun: options.dryRun === true,
    verbose: options.verbose === true,
    trigger: 'cli',
    ...(options.stack === undefined ? {} : { stack: options.stack }),
    ...(options.yes === true ? { confirm: true } : {}),
    // Embedded, the person at this terminal; through a master, who the master authenticates.
    ...(master ? {} : { user: osUser() }),
  };

  // Asked only of a person at a terminal; --yes, JSON output and pipes (CI) go ahead.
  const mayAsk = ctx.isTTY && !options.yes && options.output === 'text';
  const confirmed = async (delegates: () => Promise<boolean>) =>
    !mayAsk ||
    !(await delegates()) ||
    (await confirm(ctx, confirmationQuestion(name ?? basename(file, extname(file)), await delegationSummary(request))));
  const notConfirmed = () => {
    ctx.stderr.write('runner: not confirmed; nothing ran\n');
    return 1;
  };

  if (master) {
    // A file that cannot be read here counts as delegating: the question is asked, not skipped.
    const delegatesLoosely = async () => ((await delegationSummary(request)) ?? [{}]).length > 0;
    if (!(await confirmed(delegatesLoosely))) return notConfirmed();
    return runOnMaster(createMasterClient(master, { dataDir: ctx.config.dataDir }), request, ctx, options);
  }

  const engine = (kernel as NonNullable<typeof kernel>).get(WorkflowEngineRef);
  if (!(await confirmed(() => engine.delegates(request)))) return notConfirmed();
  const view = runViewFor(ctx, options);
  // Ctrl-C (or a supervisor's TERM) cancels the run instead of killing the process under it: the
  // kernel's stop cancels every run, which stops the scripts and kills the commands they wait
  // for, and the run is recorded as cancelled rather than left "running" for ever. A second
  // signal exits at once (the kernel's rule). Listened for before the run starts: its first
  // command can be running before `start` returns (a signal then killed the runner outright).
  let interrupted: NodeJS.Signals | undefined;
  let runId: string | undefined;
  // Cancelled by the person (recorded as who cancelled it), before the kernel's stop cancels what is left.
  const cancelRun = () =>
    runId !== undefined &&
    void engine.cancel(runId, { by: request.user, reason: `cancelled: interrupted (${interrupted})` }).catch(() => {});
  const noteSignal = (signal: NodeJS.Signals) => {
    interrupted ??= signal;
    cancelRun();
  };
  process.once('SIGINT', noteSignal).once('SIGTERM', noteSignal);
  (kernel as NonNullable<typeof kernel>).stopOnSignal().catch(() => {});
  try {
    const started = await engine.start(request, view.observe);
    runId = started.runId;
    if (interrupted) cancelRun();
    const record = await started.done;
    view.finish(record);
    return interrupted ? signalExitCode(interrupted) : exitCodeOf(record);
  } catch (error) {
    // Interrupted before the run started (while validating): nothing ran; the exit code says why.
    if (interrupted) return signalExitCode(interrupted);
    throw error;
  } finally {
    process.off('SIGINT', noteSignal).off('SIGTERM', noteSignal);
  }
}

/**
 * `runner run <flow> [--version n]`: the saved flow, started under its concurrency by the flows
 * service (on the master through `POST /flows/:name/run`, else embedded over the local store),
 * followed as a file's run is. A start the flow's concurrency queued or skipped says so (exit 1).
 */
async function runSavedFlow(
  flow: string,
  options: RunOptions,
  ctx: CommandContext,
  master: Awaited<ReturnType<typeof findMaster>>['endpoint'],
): Promise<number> {
  const version = options.version === undefined ? undefined : parseVersion(options.version);
  const vars = parseVarsLoosely(options.var ?? []);
  const notStarted = (answer: { outcome: string; reason?: string }) => {
    ctx.stderr.write(
      answer.outcome === 'queued'
        ? `runner: flow ${flow} is at its concurrency limit: the run is queued and starts when one ends\n`
        : `runner: nothing ran: ${answer.reason ?? 'skipped'}\n`,
    );
    return 1;
  };
  if (master) {
    const client = createMasterClient(master, { dataDir: ctx.config.dataDir });
    // Ctrl-C from before the run is asked for, as `runner run` does (runOnMaster).
    return withInterrupt(ctx, async (interrupt) => {
      const answer = await client.call<{ outcome: string; id?: string; reason?: string }>(
        'POST',
        `/flows/${encodeURIComponent(flow)}/run`,
        {
          body: {
            ...(Object.keys(vars).length ? { vars } : {}),
            ...(version === undefined ? {} : { version }),
            ...(options.stack === undefined ? {} : { stack: options.stack }),
            ...(options.yes === true ? { confirm: true } : {}),
          },
        },
      );
      if (answer.outcome !== 'started' || !answer.id) return notStarted(answer);
      return followOnMaster(client, answer.id, ctx, options, interrupt);
    });
  }
  const kernel = await ctx.boot('embedded');
  const flows = kernel.find(FlowsRef);
  if (!flows || !(await flows.get(flow)))
    throw new InvalidInputError(
      `no file "${flow}" and no saved flow of that name (runner flow list); give the workflow file: runner run workflow.yaml`,
      { field: 'file' },
    );
  const view = runViewFor(ctx, options);
  (kernel as NonNullable<typeof kernel>).stopOnSignal().catch(() => {});
  const started = await flows.start(flow, {
    trigger: 'cli',
    user: osUser(),
    ...(Object.keys(vars).length ? { vars } : {}),
    ...(version === undefined ? {} : { version }),
    ...(options.stack === undefined ? {} : { stack: options.stack }),
    ...(options.yes === true ? { confirm: true } : {}),
    observer: view.observe,
  });
  if (started.outcome !== 'started') return notStarted(started);
  const record = await started.done;
  view.finish(record);
  return exitCodeOf(record);
}

/** `--version`: a whole number of at least 1. */
function parseVersion(text: string): number {
  const version = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(version) || version < 1)
    throw new InvalidInputError(`--version: expected a version number (1, 2, ...), got "${text}"`, {
      field: 'version',
    });
  return version;
}

/** The OS account running the command, recorded as who started an embedded run. */
function osUser(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    // No passwd entry for the uid (some containers): nobody to name.
    return undefined;
  }
}

/** How a command stopped by a signal exits: 128 + the signal's number, as shells report it. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return signal === 'SIGINT' ? 130 : 143;
}

export function exitCodeOf(record: RunRecord): number {
  return record.status === 'succeeded' ? 0 : 1;
}

async function readValues(
  path: string,
  parser: { parseValues(text: string, o: { file: string }): Record<string, Record<string, unknown>> } | undefined,
) {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new InvalidInputError(
      `--values ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
      { field: 'values' },
    );
  }
  if (!parser) {
    return parse(text) as Record<string, Record<string, unknown>>;
  }
  return parser.parseValues(text, { file: path });
}

function parseVarsLoosely(args: string[]): Record<string, string> {
  return Object.fromEntries(
    args.map((arg) => {
      const at = arg.indexOf('=');
      if (at <= 0) throw new InvalidInputError(`--var ${arg}: expected key=value`, { field: 'var' });
      return [arg.slice(0, at), arg.slice(at + 1)];
    }),
  );
}

async function confirm(ctx: CommandContext, question: string): Promise<boolean> {
  // Loaded when asked: every `runner run` imports this module, few of them ask.
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: ctx.stdin, output: ctx.stdout });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

/** `--forks`: a whole number of at least 1, else a usage error (exit 2). */
function parseForks(text: string): number {
  const forks = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(forks) || forks < 1)
    throw new InvalidInputError(`--forks: expected a whole number of at least 1, got "${text}"`, { field: 'forks' });
  return forks;
}
