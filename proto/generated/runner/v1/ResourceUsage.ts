// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

export interface ResourceUsage {
  cpu_percent?: number | string;
  memory_percent?: number | string;
  disk_percent?: number | string;
  /**
   * Seconds the agent process has run.
   */
  uptime?: number | string;
}

export interface ResourceUsage__Output {
  cpu_percent: number;
  memory_percent: number;
  disk_percent: number;
  /**
   * Seconds the agent process has run.
   */
  uptime: number;
}
