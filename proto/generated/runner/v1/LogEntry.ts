// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

import type {
  LogLevel as _runner_v1_LogLevel,
  LogLevel__Output as _runner_v1_LogLevel__Output,
} from '../../runner/v1/LogLevel.js';

export interface LogEntry {
  /**
   * ISO 8601 UTC.
   */
  timestamp?: string;
  level?: _runner_v1_LogLevel;
  message?: string;
  /**
   * JSON object of structured fields; empty when none.
   */
  fields_json?: string;
}

export interface LogEntry__Output {
  /**
   * ISO 8601 UTC.
   */
  timestamp: string;
  level: _runner_v1_LogLevel__Output;
  message: string;
  /**
   * JSON object of structured fields; empty when none.
   */
  fields_json: string;
}
