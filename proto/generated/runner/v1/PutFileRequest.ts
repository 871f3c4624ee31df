// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

export interface PutFileRequest {
  path?: string;
  data?: Buffer | Uint8Array | string;
  /**
   * File mode; 0: 0600.
   */
  mode?: number;
}

export interface PutFileRequest__Output {
  path: string;
  data: Buffer;
  /**
   * File mode; 0: 0600.
   */
  mode: number;
}
