// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

export interface CallFailed {
  /**
   * Stable snake_case code (e.g. `unsupported_call`, `internal`).
   */
  code?: string;
  message?: string;
}

export interface CallFailed__Output {
  /**
   * Stable snake_case code (e.g. `unsupported_call`, `internal`).
   */
  code: string;
  message: string;
}
