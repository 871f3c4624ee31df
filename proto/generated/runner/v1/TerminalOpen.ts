// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

export interface TerminalOpen {
  rows?: number;
  cols?: number;
  /**
   * TERM for the shell; empty: xterm-256color.
   */
  term?: string;
}

export interface TerminalOpen__Output {
  rows: number;
  cols: number;
  /**
   * TERM for the shell; empty: xterm-256color.
   */
  term: string;
}
