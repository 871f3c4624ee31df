// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

import type { Long } from '@grpc/proto-loader';

export interface FileResult {
  /**
   * GetFile: the content.
   */
  data?: Buffer | Uint8Array | string;
  /**
   * PutFile: bytes written.
   */
  bytes?: number | string | Long;
}

export interface FileResult__Output {
  /**
   * GetFile: the content.
   */
  data: Buffer;
  /**
   * PutFile: bytes written.
   */
  bytes: number;
}
