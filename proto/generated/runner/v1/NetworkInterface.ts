// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

import type { Long } from '@grpc/proto-loader';

export interface NetworkInterface {
  name?: string;
  addresses?: string[];
  rx_bytes?: number | string | Long;
  tx_bytes?: number | string | Long;
  rx_bytes_per_sec?: number | string;
  tx_bytes_per_sec?: number | string;
}

export interface NetworkInterface__Output {
  name: string;
  addresses: string[];
  rx_bytes: number;
  tx_bytes: number;
  rx_bytes_per_sec: number;
  tx_bytes_per_sec: number;
}
