// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

import type {
  CallFailed as _runner_v1_CallFailed,
  CallFailed__Output as _runner_v1_CallFailed__Output,
} from '../../runner/v1/CallFailed.js';

export interface StateResponse {
  /**
   * get: the stored value as JSON; empty when the key has none.
   */
  value_json?: string;
  /**
   * keys: the keys that have a value in the scope, sorted.
   */
  keys?: string[];
  /**
   * set, changed, clear: the stored value differed (in dry-run: would have).
   */
  changed?: boolean;
  /**
   * Set when the master refused or could not serve the request; the fields above are then empty.
   */
  failed?: _runner_v1_CallFailed | null;
}

export interface StateResponse__Output {
  /**
   * get: the stored value as JSON; empty when the key has none.
   */
  value_json: string;
  /**
   * keys: the keys that have a value in the scope, sorted.
   */
  keys: string[];
  /**
   * set, changed, clear: the stored value differed (in dry-run: would have).
   */
  changed: boolean;
  /**
   * Set when the master refused or could not serve the request; the fields above are then empty.
   */
  failed: _runner_v1_CallFailed__Output | null;
}
