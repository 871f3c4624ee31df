// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

import type * as grpc from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import type {
  AgentMessage as _runner_v1_AgentMessage,
  AgentMessage__Output as _runner_v1_AgentMessage__Output,
} from '../../runner/v1/AgentMessage.js';
import type {
  DescribeRequest as _runner_v1_DescribeRequest,
  DescribeRequest__Output as _runner_v1_DescribeRequest__Output,
} from '../../runner/v1/DescribeRequest.js';
import type {
  DescribeResponse as _runner_v1_DescribeResponse,
  DescribeResponse__Output as _runner_v1_DescribeResponse__Output,
} from '../../runner/v1/DescribeResponse.js';
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
   * or ends the stream with an error status (UNAUTHENTICATED for a wrong or missing join token or
   * credential, PERMISSION_DENIED for a revoked credential, ALREADY_EXISTS for a name enrolled by
   * another agent, INVALID_ARGUMENT for a bad name, FAILED_PRECONDITION for an unsupported
   * protocol version).
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
   * or ends the stream with an error status (UNAUTHENTICATED for a wrong or missing join token or
   * credential, PERMISSION_DENIED for a revoked credential, ALREADY_EXISTS for a name enrolled by
   * another agent, INVALID_ARGUMENT for a bad name, FAILED_PRECONDITION for an unsupported
   * protocol version).
   */
  connect(
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientDuplexStream<_runner_v1_AgentMessage, _runner_v1_MasterMessage__Output>;
  connect(
    options?: grpc.CallOptions,
  ): grpc.ClientDuplexStream<_runner_v1_AgentMessage, _runner_v1_MasterMessage__Output>;

  /**
   * Where the master's REST API is, for a client that knows only this address (RUNNER_MASTER_ADDR):
   * `runner run` and the `runner agent` commands from a CI job. It needs no join token: it tells
   * no more than a port scan would, and the token is for agents, not for operators.
   */
  Describe(
    argument: _runner_v1_DescribeRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_DescribeResponse__Output>,
  ): grpc.ClientUnaryCall;
  Describe(
    argument: _runner_v1_DescribeRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runner_v1_DescribeResponse__Output>,
  ): grpc.ClientUnaryCall;
  Describe(
    argument: _runner_v1_DescribeRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_DescribeResponse__Output>,
  ): grpc.ClientUnaryCall;
  Describe(
    argument: _runner_v1_DescribeRequest,
    callback: grpc.requestCallback<_runner_v1_DescribeResponse__Output>,
  ): grpc.ClientUnaryCall;
  /**
   * Where the master's REST API is, for a client that knows only this address (RUNNER_MASTER_ADDR):
   * `runner run` and the `runner agent` commands from a CI job. It needs no join token: it tells
   * no more than a port scan would, and the token is for agents, not for operators.
   */
  describe(
    argument: _runner_v1_DescribeRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_DescribeResponse__Output>,
  ): grpc.ClientUnaryCall;
  describe(
    argument: _runner_v1_DescribeRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runner_v1_DescribeResponse__Output>,
  ): grpc.ClientUnaryCall;
  describe(
    argument: _runner_v1_DescribeRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_DescribeResponse__Output>,
  ): grpc.ClientUnaryCall;
  describe(
    argument: _runner_v1_DescribeRequest,
    callback: grpc.requestCallback<_runner_v1_DescribeResponse__Output>,
  ): grpc.ClientUnaryCall;
}

/**
 * Served by the master on its gRPC port (config grpc.port, default 50053).
 */
export interface MasterHandlers extends grpc.UntypedServiceImplementation {
  /**
   * The agent's only call. Its first message must be `register`; the master answers `registered`
   * or ends the stream with an error status (UNAUTHENTICATED for a wrong or missing join token or
   * credential, PERMISSION_DENIED for a revoked credential, ALREADY_EXISTS for a name enrolled by
   * another agent, INVALID_ARGUMENT for a bad name, FAILED_PRECONDITION for an unsupported
   * protocol version).
   */
  Connect: grpc.handleBidiStreamingCall<_runner_v1_AgentMessage__Output, _runner_v1_MasterMessage>;

  /**
   * Where the master's REST API is, for a client that knows only this address (RUNNER_MASTER_ADDR):
   * `runner run` and the `runner agent` commands from a CI job. It needs no join token: it tells
   * no more than a port scan would, and the token is for agents, not for operators.
   */
  Describe: grpc.handleUnaryCall<_runner_v1_DescribeRequest__Output, _runner_v1_DescribeResponse>;
}

export interface MasterDefinition extends grpc.ServiceDefinition {
  Connect: MethodDefinition<
    _runner_v1_AgentMessage,
    _runner_v1_MasterMessage,
    _runner_v1_AgentMessage__Output,
    _runner_v1_MasterMessage__Output
  >;
  Describe: MethodDefinition<
    _runner_v1_DescribeRequest,
    _runner_v1_DescribeResponse,
    _runner_v1_DescribeRequest__Output,
    _runner_v1_DescribeResponse__Output
  >;
}
