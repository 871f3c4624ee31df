// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

import type * as grpc from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import type {
  AgentMessage as _runner_v1_AgentMessage,
  AgentMessage__Output as _runner_v1_AgentMessage__Output,
} from '../../runner/v1/AgentMessage.js';
import type {
  MasterMessage as _runner_v1_MasterMessage,
  MasterMessage__Output as _runner_v1_MasterMessage__Output,
} from '../../runner/v1/MasterMessage.js';

/**
 * Served by the master on its gRPC port (config grpc.port, default 50053).
 */
export interface MasterClient extends grpc.Client {
  /**
   * The agent's only call. Its first message must be `register`; the master answers `registered`
   * or ends the stream with an error status (UNAUTHENTICATED for a wrong or missing join token,
   * INVALID_ARGUMENT for a bad name, FAILED_PRECONDITION for an unsupported protocol version).
   */
  Connect(
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientDuplexStream<_runner_v1_AgentMessage, _runner_v1_MasterMessage__Output>;
  Connect(
    options?: grpc.CallOptions,
  ): grpc.ClientDuplexStream<_runner_v1_AgentMessage, _runner_v1_MasterMessage__Output>;
  /**
   * The agent's only call. Its first message must be `register`; the master answers `registered`
   * or ends the stream with an error status (UNAUTHENTICATED for a wrong or missing join token,
   * INVALID_ARGUMENT for a bad name, FAILED_PRECONDITION for an unsupported protocol version).
   */
  connect(
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientDuplexStream<_runner_v1_AgentMessage, _runner_v1_MasterMessage__Output>;
  connect(
    options?: grpc.CallOptions,
  ): grpc.ClientDuplexStream<_runner_v1_AgentMessage, _runner_v1_MasterMessage__Output>;
}

/**
 * Served by the master on its gRPC port (config grpc.port, default 50053).
 */
export interface MasterHandlers extends grpc.UntypedServiceImplementation {
  /**
   * The agent's only call. Its first message must be `register`; the master answers `registered`
   * or ends the stream with an error status (UNAUTHENTICATED for a wrong or missing join token,
   * INVALID_ARGUMENT for a bad name, FAILED_PRECONDITION for an unsupported protocol version).
   */
  Connect: grpc.handleBidiStreamingCall<_runner_v1_AgentMessage__Output, _runner_v1_MasterMessage>;
}

export interface MasterDefinition extends grpc.ServiceDefinition {
  Connect: MethodDefinition<
    _runner_v1_AgentMessage,
    _runner_v1_MasterMessage,
    _runner_v1_AgentMessage__Output,
    _runner_v1_MasterMessage__Output
  >;
}
