// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

import type {
  ResourceUsage as _runner_v1_ResourceUsage,
  ResourceUsage__Output as _runner_v1_ResourceUsage__Output,
} from '../../runner/v1/ResourceUsage.js';

export interface HeartbeatRequest {
  usage?: _runner_v1_ResourceUsage | null;
  /**
   * Tasks running on the agent now.
   */
  running_tasks?: number;
  /**
   * Non-empty when the agent cannot work properly (its status becomes `error`); the text says why.
   */
  error?: string;
}

export interface HeartbeatRequest__Output {
  usage: _runner_v1_ResourceUsage__Output | null;
  /**
   * Tasks running on the agent now.
   */
  running_tasks: number;
  /**
   * Non-empty when the agent cannot work properly (its status becomes `error`); the text says why.
   */
  error: string;
}
