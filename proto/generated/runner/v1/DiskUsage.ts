// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

import type { Long } from '@grpc/proto-loader';

export interface DiskUsage {
  total_bytes?: number | string | Long;
  used_bytes?: number | string | Long;
  usage_percent?: number | string;
}

export interface DiskUsage__Output {
  total_bytes: number;
  used_bytes: number;
  usage_percent: number;
}
