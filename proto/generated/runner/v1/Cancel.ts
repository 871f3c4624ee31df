// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

export interface Cancel {
  reason?: string;
}

export interface Cancel__Output {
  reason: string;
}
