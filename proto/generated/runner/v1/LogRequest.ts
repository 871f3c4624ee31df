// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

export interface LogRequest {
  /**
   * How many recent lines to send first.
   */
  tail?: number;
  /**
   * Keep sending new lines until cancelled.
   */
  follow?: boolean;
}

export interface LogRequest__Output {
  /**
   * How many recent lines to send first.
   */
  tail: number;
  /**
   * Keep sending new lines until cancelled.
   */
  follow: boolean;
}
