// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
/* eslint-disable @typescript-eslint/no-empty-object-type -- empty messages, as generated */
// Original file: runner.proto

/**
 * Sent before the agent acts on the request.
 */
export interface ControlResponse {}

/**
 * Sent before the agent acts on the request.
 */
export interface ControlResponse__Output {}
