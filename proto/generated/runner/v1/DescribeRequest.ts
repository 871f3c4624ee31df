// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
/* eslint-disable @typescript-eslint/no-empty-object-type -- empty messages, as generated */
// Original file: runner.proto

export interface DescribeRequest {}

export interface DescribeRequest__Output {}
