// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

export interface TerminalData {
  data?: Buffer | Uint8Array | string;
}

export interface TerminalData__Output {
  data: Buffer;
}
