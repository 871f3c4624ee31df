// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

import type { Long } from '@grpc/proto-loader';

export interface Disk {
  mount?: string;
  fs_type?: string;
  total_bytes?: number | string | Long;
  used_bytes?: number | string | Long;
  usage_percent?: number | string;
}

export interface Disk__Output {
  mount: string;
  fs_type: string;
  total_bytes: number;
  used_bytes: number;
  usage_percent: number;
}
