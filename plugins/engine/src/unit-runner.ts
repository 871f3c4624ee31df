import {
  isRunnerError,
  luaLazyTable,
  messageOf,
  type AgentDelegator,
  type LuaRunOptions,
  type LuaRunResult,
  type LuaValue,
  type TaskResult,
  type TemplateEngine,
  type TemplateSyntax,
} from '@runner/plugin-sdk';
import type { TaskLog } from './task-log.js';
import { hasTemplate, type RenderBounds, type Unit } from './units.js';
import type { WorkflowDefinition } from './workflow-types.js';

export interface UnitEnvironment {
  runId: string;
  workflowName: string;
  workflow: WorkflowDefinition;
  syntax: TemplateSyntax;
  dryRun: boolean;
  /**
   * Runs local scripts: the master's door (local-door.ts; it tells the task's log how many lines
   * the executor dropped) or, embedded, the Lua runtime itself.
   */
  runtime: { run(source: string, options: LuaRunOptions, log?: Pick<TaskLog, 'drop'>): Promise<LuaRunResult> };
  template: TemplateEngine;
  delegator?: AgentDelegator;
  /** The shared template/Lua context: vars, values (all agents), env, tasks, workflow, dry_run. */
  base: Record<string, unknown>;
  values: Record<string, Record<string, unknown>>;
  signal: AbortSignal;
  /** The timeout of an attempt of a task without `timeout:` (engine.task_timeout); undefined: none. */
  defaultTimeoutMs?: number;
  /** What the script of a local unit may use (engine.memory_limit). */
  memoryLimitBytes?: number;
  /** Waits between retries; abortable. */
  sleep(ms: number, signal: AbortSignal): Promise<unknown>;
  /** Before-task taps (absent when there are none): a reason refuses the attempt, failing the unit. */
  beforeAttempt?(attempt: number): Promise<string | undefined>;
}

export interface UnitOutcome {
  status: 'succeeded' | 'failed' | 'skipped';
  message?: string;
  outputs?: Record<string, LuaValue>;
  attempts: number;
}

/** What bounds rendering a task's templates: its timeout, the run's signal, its memory limit. */
export function renderBounds(
  task: Pick<Unit['task'], 'timeoutMs'>,
  env: Pick<UnitEnvironment, 'defaultTimeoutMs' | 'signal' | 'memoryLimitBytes'>,
): RenderBounds {
  return {
    timeoutMs: task.timeoutMs ?? env.defaultTimeoutMs,
    signal: env.signal,
    memoryLimitBytes: env.memoryLimitBytes,
  };
}

/** Runs one unit to its outcome: condition, dry-run rule, rendering, attempts with backoff. */
export async function runUnit(
  unit: Unit,
  env: UnitEnvironment,
  log: TaskLog,
  onAttempt: (attempt: number) => void,
): Promise<UnitOutcome> {
  const { task } = unit;
  const agent = unit.agents.length === 1 ? unit.agents[0] : 'localhost';
  const context: Record<string, unknown> = {
    ...env.base,
    values: env.values[agent] ?? {},
    ...(unit.loopIndex !== undefined ? { item: unit.item, loop_index: unit.loopIndex } : {}),
    task: { name: task.name, attempt: 1 },
  };

  if (task.when !== undefined) {
    let holds: boolean;
    try {
      holds = await env.template.evaluateBounded(task.when, context, {
        ...renderBounds(task, env),
        syntax: env.syntax,
        name: `task ${task.name} when`,
      });
    } catch (error) {
      return { status: 'failed', message: withFileLine(messageOf(error), error, unit), attempts: 0 };
    }
    if (!holds) return { status: 'skipped', message: `condition is false: ${task.when}`, attempts: 0 };
  }
  if (env.dryRun && task.dryRun === 'skip') {
    return {
      status: 'skipped',
      message: 'dry-run: script not run (set dry_run: run to run it with side effects reported only)',
      attempts: 0,
    };
  }

  const retry = task.retry ?? { attempts: 1, delayMs: 0, backoff: 1 };
  let delay = retry.delayMs;
  let last: UnitOutcome = { status: 'failed', attempts: 0 };
  for (let attempt = 1; attempt <= retry.attempts; attempt++) {
    onAttempt(attempt);
    (context.task as { attempt: number }).attempt = attempt;
    if (env.beforeAttempt) {
      // A refusal is a decision, not a transient failure: no further attempt.
      const refused = await env.beforeAttempt(attempt);
      if (refused !== undefined) {
        log.add('warn', refused);
        return { status: 'failed', message: refused, attempts: attempt };
      }
    }
    last = await attemptOnce(unit, env, log, context, attempt);
    if (last.status === 'succeeded' || env.signal.aborted) return last;
    if (attempt < retry.attempts) {
      log.add(
        'warn',
        `attempt ${attempt} of ${retry.attempts} failed: ${last.message}; retrying in ${formatSeconds(delay)}`,
      );
      await env.sleep(delay, env.signal);
      delay = Math.min(delay * retry.backoff, retry.maxDelayMs ?? Number.POSITIVE_INFINITY);
    }
  }
  return last;
}

async function attemptOnce(
  unit: Unit,
  env: UnitEnvironment,
  log: TaskLog,
  context: Record<string, unknown>,
  attempt: number,
): Promise<UnitOutcome> {
  const { task } = unit;
  let script = task.exec.script;
  // The attempt's timeout covers rendering its script: the script gets what rendering left.
  const bounds = renderBounds(task, env);
  const renderStart = performance.now();
  try {
    if (hasTemplate(script))
      script = await env.template.renderBounded(script, context, {
        ...bounds,
        syntax: env.syntax,
        name: `task ${task.name} script`,
      });
  } catch (error) {
    return { status: 'failed', message: withFileLine(messageOf(error), error, unit), attempts: attempt };
  }
  const timeoutMs =
    bounds.timeoutMs === undefined
      ? undefined
      : Math.max(1, bounds.timeoutMs - Math.round(performance.now() - renderStart));
  const globals = { ...context, item: context.item, loop_index: context.loop_index } as Record<string, LuaValue>;
  try {
    if (unit.agents.length === 0) {
      const { values } = await env.runtime.run(
        script,
        {
          chunkName: `=${task.name}`,
          // `tasks` grows with every task run and `env` is large; a script reads a few entries, so
          // they are converted on first read instead of into every fresh Lua state (O(n^2) otherwise).
          globals: {
            ...globals,
            tasks: luaLazyTable(globals.tasks as Record<string, unknown>),
            env: luaLazyTable(globals.env as Record<string, unknown>),
          },
          dryRun: env.dryRun,
          logger: log.logger,
          signal: env.signal,
          timeoutMs,
          memoryLimitBytes: env.memoryLimitBytes,
          // os.getenv (and os.execute/io.popen) see what the `env` global shows: the runner's own
          // RUNNER_* settings, which may hold credentials, are left out of both.
          env: env.base.env as Record<string, string>,
          run: { workflow: env.workflowName, runId: env.runId, task: task.name, attempt, agent: 'localhost' },
        },
        log,
      );
      return interpret(values, attempt);
    }
    return await delegate(unit, env, log, script, globals, attempt, timeoutMs);
  } catch (error) {
    // The runtime prefixes `task <name>: ` for the process log; the record and every view already
    // name the task, so the message starts with what went wrong.
    const prefix = `task ${task.name}: `;
    const raw = messageOf(error);
    const message = raw.startsWith(prefix) ? raw.slice(prefix.length) : raw;
    return { status: 'failed', message: withFileLine(message, error, unit, script), attempts: attempt };
  }
}

async function delegate(
  unit: Unit,
  env: UnitEnvironment,
  log: TaskLog,
  script: string,
  globals: Record<string, LuaValue>,
  attempt: number,
  timeoutMs: number | undefined,
): Promise<UnitOutcome> {
  const delegator = env.delegator as AgentDelegator;
  const candidates = unit.failover ? unit.agents : unit.agents.slice(0, 1);
  const reasons: string[] = [];
  for (const agent of candidates) {
    if (!delegator.isAvailable(agent)) {
      reasons.push(`${agent}: offline`);
      continue;
    }
    try {
      const result = await delegator.execute(
        agent,
        {
          runId: env.runId,
          workflowName: env.workflowName,
          task: unit.task.name,
          unit: unit.name,
          script,
          globals: { ...withoutEnv(globals), values: (env.values[agent] ?? {}) as LuaValue },
          dryRun: env.dryRun,
          timeoutMs,
          // Only the workflow's own limit travels: the master's engine.memory_limit is a setting of
          // this process, and an agent sized differently keeps its default.
          memoryLimitBytes: env.workflow.memoryLimitBytes,
          attempt,
        },
        { signal: env.signal, onLog: (line) => log.add(line.level, line.message, { ...line.fields, agent }) },
      );
      return {
        status: result.success ? 'succeeded' : 'failed',
        message: result.message,
        outputs: result.outputs,
        attempts: attempt,
      };
    } catch (error) {
      // Failover moves on only when the agent could not be reached; a task that failed there failed.
      if (unit.failover && isRunnerError(error) && error.code === 'agent_unreachable') {
        reasons.push(`${agent}: ${error.message}`);
        log.add('warn', `agent ${agent} unreachable, trying the next one: ${error.message}`);
        continue;
      }
      throw error;
    }
  }
  return { status: 'failed', message: `no agent could take the task (${reasons.join('; ')})`, attempts: attempt };
}

/** A script succeeds with nothing or true, fails with false (message second), outputs third. */
function interpret(values: LuaValue[], attempt: number): UnitOutcome {
  const [first, message, outputs] = values;
  const text = message === undefined || message === null ? undefined : String(message);
  if (outputs !== undefined && outputs !== null && (typeof outputs !== 'object' || Array.isArray(outputs))) {
    return {
      status: 'failed',
      message: `the third return value (outputs) must be a table with named keys, got ${Array.isArray(outputs) ? 'a list' : typeof outputs}`,
      attempts: attempt,
    };
  }
  const out = (outputs ?? undefined) as Record<string, LuaValue> | undefined;
  if (first === undefined || first === null || first === true)
    return { status: 'succeeded', message: text, outputs: out, attempts: attempt };
  if (first === false)
    return { status: 'failed', message: text ?? 'the script returned false', outputs: out, attempts: attempt };
  return {
    status: 'failed',
    message: `the script returned ${typeof first === 'object' ? 'a table' : `a ${typeof first}`}; a task returns nothing, true, or false [, message [, outputs]]`,
    attempts: attempt,
  };
}

/**
 * Adds the file position of a Lua or template error's script line, from the parser's source map.
 * A Lua error's line is a line of the script as rendered (`rendered`); it is the same line of the
 * file only while rendering kept every line where it was: no block tags or comments (`{% %}`,
 * `{# #}`, Go actions), which may drop or repeat lines, and as many lines out as in. Otherwise the
 * message says where the script starts instead of pointing at a wrong line.
 */
function withFileLine(message: string, error: unknown, unit: Unit, rendered?: string): string {
  const line = isRunnerError(error) ? error.details?.line : undefined;
  const { file, scriptLines } = unit.task.source;
  const source = unit.task.exec.script;
  const shifted =
    rendered !== undefined &&
    rendered !== source &&
    (/\{%|\{#|\{\{-?\s*(if|range|with|define|block|template|end|else)\b|\{\{-?\s*\/\*/.test(source) ||
      rendered.split('\n').length !== source.split('\n').length);
  if (typeof line !== 'number') return message;
  if (shifted) return `${message} (line ${line} of the script as rendered; it starts at ${file}:${scriptLines[0]})`;
  const fileLine = scriptLines[line - 1];
  return fileLine ? `${message} (${file}:${fileLine})` : message;
}

function formatSeconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${+(ms / 1000).toFixed(2)} s`;
}

export type { TaskResult };

/** What travels to an agent: never the master's environment (the agent sets `env` from its own agent.script_env). */
function withoutEnv({ env: _masterEnv, ...globals }: Record<string, LuaValue>): Record<string, LuaValue> {
  return globals;
}
