// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

export interface NetworkRate {
  rx_bytes_per_sec?: number | string;
  tx_bytes_per_sec?: number | string;
}

export interface NetworkRate__Output {
  rx_bytes_per_sec: number;
  tx_bytes_per_sec: number;
}
