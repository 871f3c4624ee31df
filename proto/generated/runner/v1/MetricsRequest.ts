// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

export interface MetricsRequest {
  processes?: boolean;
  network?: boolean;
  disks?: boolean;
}

export interface MetricsRequest__Output {
  processes: boolean;
  network: boolean;
  disks: boolean;
}
