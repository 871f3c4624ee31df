// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

export interface TerminalInput {
  /**
   * Bytes typed (may be empty when only resizing).
   */
  data?: Buffer | Uint8Array | string;
  /**
   * A new size when both are set.
   */
  rows?: number;
  cols?: number;
}

export interface TerminalInput__Output {
  /**
   * Bytes typed (may be empty when only resizing).
   */
  data: Buffer;
  /**
   * A new size when both are set.
   */
  rows: number;
  cols: number;
}
