// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

export interface ExecResponse {
  stdout?: string;
  stderr?: string;
  /**
   * Meaningful when `exited`; a process ended by a signal has no exit code.
   */
  exit_code?: number;
  exited?: boolean;
  timed_out?: boolean;
  /**
   * Seconds.
   */
  duration?: number | string;
}

export interface ExecResponse__Output {
  stdout: string;
  stderr: string;
  /**
   * Meaningful when `exited`; a process ended by a signal has no exit code.
   */
  exit_code: number;
  exited: boolean;
  timed_out: boolean;
  /**
   * Seconds.
   */
  duration: number;
}
