// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

import type { Long } from '@grpc/proto-loader';

export interface HeartbeatResponse {
  /**
   * The master's clock, Unix milliseconds.
   */
  server_time_ms?: number | string | Long;
}

export interface HeartbeatResponse__Output {
  /**
   * The master's clock, Unix milliseconds.
   */
  server_time_ms: number;
}
