import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  InvalidInputError,
  luaOptionalBoolean,
  luaOptionalNumber,
  luaOptionalString,
  luaString,
  luaStringList,
  luaStringMap,
  readLuaOptions,
  RunnerError,
  runTool,
  toLuaValue,
  toolFailure,
  type LuaCallContext,
  type LuaModuleImplementation,
  type LuaValue,
} from '@runner/plugin-sdk';
import { ansibleModule } from './ansible-spec.js';

/** The JSON callback's document (ansible.posix.json), the parts read. */
export interface AnsibleJson {
  plays?: {
    play: { name?: string };
    tasks: { task: { name?: string }; hosts: Record<string, Record<string, unknown>> }[];
  }[];
  stats?: Record<
    string,
    {
      ok: number;
      changed: number;
      failures: number;
      unreachable: number;
      skipped: number;
      rescued?: number;
      ignored?: number;
    }
  >;
}

export interface TaskResult {
  play: string;
  task: string;
  host: string;
  /** `ok`, `changed`, `failed`, `unreachable` or `skipped`. */
  status: string;
  msg?: string;
  /** The module's whole result (what `register` would hold). */
  result: Record<string, unknown>;
}

export interface RunSummary {
  changed: boolean;
  success: boolean;
  stats: NonNullable<AnsibleJson['stats']>;
  tasks: TaskResult[];
  /** `host: task: message` for every failed or unreachable task. */
  failures: string[];
}

function statusOf(result: Record<string, unknown>): string {
  if (result.unreachable === true) return 'unreachable';
  if (result.failed === true) return 'failed';
  if (result.skipped === true) return 'skipped';
  return result.changed === true ? 'changed' : 'ok';
}

/** Reads the JSON callback's output: one entry per task and host, with the totals per host. */
export function summariseRun(doc: AnsibleJson): RunSummary {
  const tasks: TaskResult[] = [];
  for (const play of doc.plays ?? []) {
    for (const task of play.tasks) {
      for (const [host, result] of Object.entries(task.hosts)) {
        const status = statusOf(result);
        const msg = typeof result.msg === 'string' ? result.msg : undefined;
        tasks.push({ play: play.play.name ?? '', task: task.task.name ?? '', host, status, msg, result });
      }
    }
  }
  const stats = doc.stats ?? {};
  const failures = tasks
    .filter((t) => (t.status === 'failed' && t.result.ignore_errors !== true) || t.status === 'unreachable')
    .map((t) => `${t.host}: ${t.task}: ${t.msg ?? t.status}`);
  const totals = Object.values(stats);
  return {
    changed: totals.some((s) => s.changed > 0),
    success: totals.every((s) => s.failures === 0 && s.unreachable === 0),
    stats,
    tasks,
    failures,
  };
}

/** The JSON document in what ansible printed: warnings and deprecations may come before it. */
export function jsonDocument(stdout: string): AnsibleJson | null {
  const start = stdout.indexOf('{\n');
  const from = start === -1 ? stdout.indexOf('{') : start;
  if (from === -1) return null;
  try {
    return JSON.parse(stdout.slice(from)) as AnsibleJson;
  } catch {
    return null;
  }
}

const COMMON_OPTIONS = [
  'inventory',
  'limit',
  'extra_vars',
  'check',
  'diff',
  'become',
  'user',
  'connection',
  'forks',
  'env',
  'ignore_errors',
] as const;

/** Arguments both commands take; extra_vars go in a 0600 file (`-e @file`), never on the command line. */
function commonArguments(fn: string, o: Record<string, LuaValue>, scratch: string, dryRun: boolean): string[] {
  const args: string[] = [];
  for (const inventory of luaStringList(fn, 'option inventory', o.inventory)) args.push('-i', inventory);
  const limit = luaOptionalString(fn, 'option limit', o.limit);
  if (limit) args.push('--limit', limit);
  if (o.extra_vars !== undefined && o.extra_vars !== null) {
    const file = join(scratch, 'extra-vars.json');
    writeFileSync(file, JSON.stringify(o.extra_vars), { mode: 0o600 });
    args.push('-e', `@${file}`);
  }
  if (dryRun || luaOptionalBoolean(fn, 'option check', o.check)) args.push('--check');
  if (dryRun || luaOptionalBoolean(fn, 'option diff', o.diff)) args.push('--diff');
  if (luaOptionalBoolean(fn, 'option become', o.become)) args.push('--become');
  const user = luaOptionalString(fn, 'option user', o.user);
  if (user) args.push('--user', user);
  const connection = luaOptionalString(fn, 'option connection', o.connection);
  if (connection) args.push('--connection', connection);
  const forks = luaOptionalNumber(fn, 'option forks', o.forks);
  if (forks !== undefined) args.push('--forks', String(Math.round(forks)));
  return args;
}

/** Runs ansible or ansible-playbook with the JSON callback and reads its document. */
async function runAnsible(
  call: LuaCallContext,
  fn: string,
  file: string,
  args: string[],
  o: Record<string, LuaValue>,
): Promise<LuaValue> {
  const env = {
    ANSIBLE_STDOUT_CALLBACK: 'ansible.posix.json',
    // Ad-hoc commands use the stdout callback only when told to load it.
    ANSIBLE_LOAD_CALLBACK_PLUGINS: '1',
    ANSIBLE_NOCOLOR: '1',
    ANSIBLE_RETRY_FILES_ENABLED: '0',
    ANSIBLE_HOST_KEY_CHECKING: 'True',
    ...luaStringMap(fn, 'option env', o.env),
  };
  const result = await runTool(call, { file, args, env });
  const doc = jsonDocument(result.stdout);
  // 0: all went well; 2: a host failed; 4: a host was unreachable. Anything else is ansible's own error.
  if (doc === null || ![0, 2, 4].includes(result.code ?? -1)) throw toolFailure(file, 'run', result);
  const summary = summariseRun(doc);
  const ignoreErrors = luaOptionalBoolean(fn, 'option ignore_errors', o.ignore_errors) ?? false;
  if (!summary.success && !ignoreErrors) {
    throw new RunnerError(
      'failed',
      `${fn}: ${summary.failures.length} task(s) failed:\n${summary.failures.join('\n')}`,
      {
        details: { failures: summary.failures },
      },
    );
  }
  return { ...(toLuaValue(summary) as Record<string, LuaValue>), ...(call.dryRun ? { dry_run: true } : {}) };
}

async function withScratch<T>(body: (scratch: string) => Promise<T>): Promise<T> {
  const scratch = mkdtempSync(join(tmpdir(), 'runner-ansible-'));
  try {
    return await body(scratch);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

export function createAnsibleModule(
  options: { bin?: string } = {},
): LuaModuleImplementation<keyof typeof ansibleModule.functions> {
  const binDir = options.bin;
  const program = (name: string) => (binDir ? join(binDir, name) : name);
  return {
    playbook: (call, pathArg, opts) => {
      const fn = 'ansible.playbook';
      const path = luaString(fn, 'argument 1 (playbook)', pathArg);
      if (!existsSync(path)) throw new InvalidInputError(`${fn}: playbook ${path} does not exist`);
      const o = readLuaOptions(fn, 2, opts, [...COMMON_OPTIONS, 'tags', 'skip_tags']);
      return withScratch((scratch) => {
        const args = commonArguments(fn, o, scratch, call.dryRun);
        const tags = luaStringList(fn, 'option tags', o.tags);
        if (tags.length > 0) args.push('--tags', tags.join(','));
        const skip = luaStringList(fn, 'option skip_tags', o.skip_tags);
        if (skip.length > 0) args.push('--skip-tags', skip.join(','));
        return runAnsible(call, fn, program('ansible-playbook'), [...args, path], o);
      });
    },
    module: (call, patternArg, nameArg, moduleArgs, opts) => {
      const fn = 'ansible.module';
      const pattern = luaString(fn, 'argument 1 (host pattern)', patternArg);
      const name = luaString(fn, 'argument 2 (module)', nameArg);
      const o = readLuaOptions(fn, 4, opts, COMMON_OPTIONS);
      return withScratch((scratch) => {
        const args = [pattern, '-m', name, ...commonArguments(fn, o, scratch, call.dryRun)];
        // A table is passed as JSON, which `ansible -a` takes as the module's arguments.
        if (typeof moduleArgs === 'string') args.push('-a', moduleArgs);
        else if (moduleArgs !== null && moduleArgs !== undefined) args.push('-a', JSON.stringify(moduleArgs));
        return runAnsible(call, fn, program('ansible'), args, o);
      });
    },
  };
}
