import {
  checkFreeSpace,
  OWNER_VARIABLE,
  scriptEnvironment,
  type LogFields,
  type Logger,
  type LuaRuntime,
  type LuaValue,
  type Redactor,
} from '@runner/plugin-sdk';
import type { LogEntry, TaskRequest__Output, TaskResponse } from '@runner/proto';

type Level = 'debug' | 'info' | 'warn' | 'error';

const PROTO_LEVEL = {
  debug: 'LOG_LEVEL_DEBUG',
  info: 'LOG_LEVEL_INFO',
  warn: 'LOG_LEVEL_WARN',
  error: 'LOG_LEVEL_ERROR',
} as const;

export interface TaskRunnerOptions {
  agent: string;
  runtime: LuaRuntime;
  /** The agent's own log: a line when a task starts and ends. */
  logger: Logger;
  /** A task's log lines beyond this many bytes are not sent (one note says so). */
  logBytes: number;
  /** This host's variables a task sees (agent.script_env); the master sends none of its own. */
  scriptEnvNames: readonly string[];
  /** resources.disk.min_free: a task with side effects is refused while less is free on `path`. */
  minFree?: { bytes: number; path: string };
}

/**
 * Runs a delegated task with the agent's Lua runtime and modules, as the engine runs a local one:
 * same chunk name, globals, dry-run and timeout, and the same reading of the script's return
 * values. Log lines written by the script and its modules stream to the master as they come.
 */
export async function runTask(
  request: TaskRequest__Output,
  options: TaskRunnerOptions,
  context: { signal: AbortSignal; log(entry: LogEntry): void },
): Promise<TaskResponse> {
  const started = performance.now();
  const where = `task ${request.unit} of ${request.workflow} (run ${request.run_id})`;
  options.logger.info(`running ${where}`, { workflow: request.workflow, task: request.task, run_id: request.run_id });
  const logger = taskLogger(context.log, options.logBytes);
  let response: TaskResponse;
  try {
    const globals = request.globals_json ? (JSON.parse(request.globals_json) as Record<string, LuaValue>) : {};
    // Whatever a master sent as `env` is replaced: a task sees this host's allow-list only.
    const env = scriptEnvironment(options.scriptEnvNames);
    const { minFree, runtime } = options;
    if (minFree && !runtime.sideEffectFree?.(request.script)) await checkFreeSpace(minFree.path, minFree.bytes);
    // os.execute and io.popen commands get this env: the agent's mark goes with it, so the next
    // agent on this data directory finds what one left running (exec.run's inherit it).
    const owner = process.env[OWNER_VARIABLE];
    const { values } = await runtime.run(request.script, {
      chunkName: `=${request.task}`,
      globals: { ...globals, env: { ...env } },
      env: owner ? { ...env, [OWNER_VARIABLE]: owner } : env,
      dryRun: request.dry_run,
      logger,
      signal: context.signal,
      timeoutMs: request.timeout_ms || undefined,
      // 0 (or a master that does not send it): the runtime's default.
      memoryLimitBytes: request.memory_limit_mib ? request.memory_limit_mib * 1024 * 1024 : undefined,
      run: {
        workflow: request.workflow,
        runId: request.run_id,
        task: request.task,
        attempt: request.attempt,
        agent: options.agent,
      },
    });
    response = interpret(values);
  } catch (error) {
    // The runtime prefixes `task <name>: ` for the process log; the master's record names the task.
    const raw = error instanceof Error ? error.message : String(error);
    const prefix = `task ${request.task}: `;
    response = { success: false, message: raw.startsWith(prefix) ? raw.slice(prefix.length) : raw };
  }
  response.duration = (performance.now() - started) / 1000;
  options.logger[response.success ? 'info' : 'warn'](
    `${where} ${response.success ? 'succeeded' : `failed: ${response.message}`}`,
    { workflow: request.workflow, task: request.task, run_id: request.run_id, duration: response.duration },
  );
  return response;
}

/**
 * Registers the values of a delegated task's `secrets` global (a stack run's secrets, see the
 * engine's RunInputs) with the agent's redactor; the function returned forgets them. Text that
 * names no `secrets` costs a substring search.
 */
export function maskTaskSecrets(redactor: Redactor, globalsJson: string | undefined): () => void {
  if (!globalsJson || !globalsJson.includes('"secrets"')) return () => {};
  const secrets = (JSON.parse(globalsJson) as { secrets?: unknown }).secrets;
  if (!secrets || typeof secrets !== 'object') return () => {};
  const forgets = Object.values(secrets).flatMap((value) =>
    typeof value === 'string' ? [redactor.addSecret(value)] : [],
  );
  return () => forgets.forEach((forget) => forget());
}

/** A script succeeds with nothing or true, fails with false (message second), outputs third: as the engine reads it. */
export function interpret(values: LuaValue[]): TaskResponse {
  const [first, message, outputs] = values;
  const text = message === undefined || message === null ? '' : String(message);
  if (outputs !== undefined && outputs !== null && (typeof outputs !== 'object' || Array.isArray(outputs))) {
    return {
      success: false,
      message: `the third return value (outputs) must be a table with named keys, got ${Array.isArray(outputs) ? 'a list' : typeof outputs}`,
    };
  }
  const outputsJson = outputs === undefined || outputs === null ? '' : JSON.stringify(outputs);
  if (first === undefined || first === null || first === true)
    return { success: true, message: text, outputs_json: outputsJson };
  if (first === false)
    return { success: false, message: text || 'the script returned false', outputs_json: outputsJson };
  return {
    success: false,
    message: `the script returned ${typeof first === 'object' ? 'a table' : `a ${typeof first}`}; a task returns nothing, true, or false [, message [, outputs]]`,
  };
}

function taskLogger(send: (entry: LogEntry) => void, capBytes: number): Logger {
  let bytes = 0;
  let dropped = 0;
  const emit = (level: Level, message: string, fields?: LogFields) => {
    const fieldsJson = fields && Object.keys(fields).length ? safeJson(fields) : '';
    const size = message.length + fieldsJson.length + 48;
    if (bytes + size > capBytes) {
      if (dropped++ === 0) {
        send({
          timestamp: new Date().toISOString(),
          level: 'LOG_LEVEL_WARN',
          message: `the agent stopped sending this task's log at ${capBytes} bytes (agent.task_log_bytes)`,
        });
      }
      return;
    }
    bytes += size;
    send({ timestamp: new Date().toISOString(), level: PROTO_LEVEL[level], message, fields_json: fieldsJson });
  };
  const make = (bound: LogFields): Logger => ({
    debug: (m, f) => emit('debug', m, merge(bound, f)),
    info: (m, f) => emit('info', m, merge(bound, f)),
    warn: (m, f) => emit('warn', m, merge(bound, f)),
    error: (m, f) => emit('error', m, merge(bound, f)),
    child: (fields) => make({ ...bound, ...fields }),
  });
  return make({});
}

function merge(bound: LogFields, fields?: LogFields): LogFields | undefined {
  return Object.keys(bound).length ? { ...bound, ...fields } : fields;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return '';
  }
}
