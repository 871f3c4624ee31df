// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

import type { Long } from '@grpc/proto-loader';

export interface Process {
  pid?: number;
  name?: string;
  command?: string;
  cpu_percent?: number | string;
  memory_bytes?: number | string | Long;
  user?: string;
}

export interface Process__Output {
  pid: number;
  name: string;
  command: string;
  cpu_percent: number;
  memory_bytes: number;
  user: string;
}
