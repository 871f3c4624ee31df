// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

export interface TerminalExit {
  /**
   * The shell's exit code; -1 when a signal ended it.
   */
  exit_code?: number;
}

export interface TerminalExit__Output {
  /**
   * The shell's exit code; -1 when a signal ended it.
   */
  exit_code: number;
}
