import type { ConfigDeclaration, RunnerConfig } from '@runner/plugin-sdk';
import { configDuration } from './run-limits.js';

/** How long and how many executions, and their task logs, are kept. 0 turns a limit off. */
export interface RetentionSettings {
  maxAgeMs: number;
  maxRuns: number;
  logMaxAgeMs: number;
  logMaxRuns: number;
}

/**
 * The engine's retention keys, in the plugin entry (imported on every CLI start: nothing heavy).
 * Logs go first: a run's record (status, times, task results) outlives its task logs.
 */
export const RETENTION_CONFIG: ConfigDeclaration = {
  'engine.retention.max_age': {
    schema: { type: 'string' },
    default: '30d',
    help: 'finished executions older than this are removed (a duration: 30d, 12h; 0 keeps them by age)',
  },
  'engine.retention.max_runs': {
    schema: { type: 'integer', minimum: 0 },
    default: 10_000,
    help: 'at most this many executions are kept, the newest (0: no limit by count)',
  },
  'engine.retention.log_max_age': {
    schema: { type: 'string' },
    default: '7d',
    help: 'task logs of executions older than this are removed, the records stay (0 keeps them by age)',
  },
  'engine.retention.log_max_runs': {
    schema: { type: 'integer', minimum: 0 },
    default: 1_000,
    help: 'task logs are kept for this many executions, the newest (0: no limit by count)',
  },
};

export function retentionSettings(config: RunnerConfig): RetentionSettings {
  return {
    maxAgeMs: configDuration(config, 'engine.retention.max_age'),
    maxRuns: config.get<number>('engine.retention.max_runs'),
    logMaxAgeMs: configDuration(config, 'engine.retention.log_max_age'),
    logMaxRuns: config.get<number>('engine.retention.log_max_runs'),
  };
}
