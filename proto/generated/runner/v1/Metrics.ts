// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

import type { Cpu as _runner_v1_Cpu, Cpu__Output as _runner_v1_Cpu__Output } from '../../runner/v1/Cpu.js';
import type {
  Memory as _runner_v1_Memory,
  Memory__Output as _runner_v1_Memory__Output,
} from '../../runner/v1/Memory.js';
import type {
  DiskUsage as _runner_v1_DiskUsage,
  DiskUsage__Output as _runner_v1_DiskUsage__Output,
} from '../../runner/v1/DiskUsage.js';
import type {
  NetworkRate as _runner_v1_NetworkRate,
  NetworkRate__Output as _runner_v1_NetworkRate__Output,
} from '../../runner/v1/NetworkRate.js';

export interface Metrics {
  cpu?: _runner_v1_Cpu | null;
  memory?: _runner_v1_Memory | null;
  disk?: _runner_v1_DiskUsage | null;
  network?: _runner_v1_NetworkRate | null;
  /**
   * Number of processes on the host.
   */
  processes?: number;
  /**
   * Seconds the agent process has run.
   */
  uptime?: number | string;
  /**
   * ISO 8601 UTC.
   */
  collected_at?: string;
}

export interface Metrics__Output {
  cpu: _runner_v1_Cpu__Output | null;
  memory: _runner_v1_Memory__Output | null;
  disk: _runner_v1_DiskUsage__Output | null;
  network: _runner_v1_NetworkRate__Output | null;
  /**
   * Number of processes on the host.
   */
  processes: number;
  /**
   * Seconds the agent process has run.
   */
  uptime: number;
  /**
   * ISO 8601 UTC.
   */
  collected_at: string;
}
