// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

import type {
  Metrics as _runner_v1_Metrics,
  Metrics__Output as _runner_v1_Metrics__Output,
} from '../../runner/v1/Metrics.js';
import type {
  Process as _runner_v1_Process,
  Process__Output as _runner_v1_Process__Output,
} from '../../runner/v1/Process.js';
import type {
  NetworkInterface as _runner_v1_NetworkInterface,
  NetworkInterface__Output as _runner_v1_NetworkInterface__Output,
} from '../../runner/v1/NetworkInterface.js';
import type { Disk as _runner_v1_Disk, Disk__Output as _runner_v1_Disk__Output } from '../../runner/v1/Disk.js';

export interface MetricsResponse {
  metrics?: _runner_v1_Metrics | null;
  /**
   * Only when asked for.
   */
  processes?: _runner_v1_Process[];
  network?: _runner_v1_NetworkInterface[];
  disks?: _runner_v1_Disk[];
}

export interface MetricsResponse__Output {
  metrics: _runner_v1_Metrics__Output | null;
  /**
   * Only when asked for.
   */
  processes: _runner_v1_Process__Output[];
  network: _runner_v1_NetworkInterface__Output[];
  disks: _runner_v1_Disk__Output[];
}
