// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

import type { Long } from '@grpc/proto-loader';

export interface GetFileRequest {
  path?: string;
  max_bytes?: number | string | Long;
}

export interface GetFileRequest__Output {
  path: string;
  max_bytes: number;
}
