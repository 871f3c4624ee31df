import {
  DEFAULT_SCRIPT_ENV,
  InvalidInputError,
  parseDuration,
  type ConfigDeclaration,
  type RunnerConfig,
} from '@runner/plugin-sdk';

/**
 * Limits every task gets unless its workflow says otherwise, in the plugin entry (imported on
 * every CLI start: nothing heavy).
 */
export const RUN_LIMITS_CONFIG: ConfigDeclaration = {
  'engine.task_timeout': {
    schema: { type: 'string' },
    default: '1h',
    help: 'each attempt of a task without `timeout:` is stopped after this (a duration: 1h, 90s; 0: no limit)',
  },
  'engine.memory_limit': {
    schema: { type: 'integer', minimum: 1 },
    default: 512,
    help: "MiB a task's script may use unless its workflow sets memory_limit: (the heap limit of its Lua worker; also bounds what one string.rep/table.concat builds)",
  },
  'engine.script_env': {
    schema: { type: 'array', items: { type: 'string', minLength: 1 } },
    default: [...DEFAULT_SCRIPT_ENV],
    help: "the master's environment variables workflow code sees (env in scripts and templates, os.getenv, os.execute); no others, never RUNNER_*, never sent to agents",
  },
};

export interface RunLimits {
  /** 0: tasks without `timeout:` run as long as they take. */
  taskTimeoutMs: number;
  /** What a local task's script may use (LuaRunOptions.memoryLimitBytes). */
  memoryLimitBytes: number;
  /** Names of the variables workflow code sees (engine.script_env). */
  scriptEnvNames: readonly string[];
}

export function runLimits(config: RunnerConfig): RunLimits {
  return {
    taskTimeoutMs: configDuration(config, 'engine.task_timeout'),
    memoryLimitBytes: config.get<number>('engine.memory_limit') * 1024 * 1024,
    scriptEnvNames: config.get<string[]>('engine.script_env'),
  };
}

/** A duration config key in milliseconds; a bad value is an error naming the key and where it was set. */
export function configDuration(config: RunnerConfig, key: string): number {
  try {
    return parseDuration(config.get<string>(key));
  } catch (error) {
    throw new InvalidInputError(`${key} (${config.sourceOf(key)}): ${(error as Error).message}`, { field: key });
  }
}
