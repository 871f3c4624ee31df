// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

import type * as grpc from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import type {
  ControlRequest as _runner_v1_ControlRequest,
  ControlRequest__Output as _runner_v1_ControlRequest__Output,
} from '../../runner/v1/ControlRequest.js';
import type {
  ControlResponse as _runner_v1_ControlResponse,
  ControlResponse__Output as _runner_v1_ControlResponse__Output,
} from '../../runner/v1/ControlResponse.js';
import type {
  ExecRequest as _runner_v1_ExecRequest,
  ExecRequest__Output as _runner_v1_ExecRequest__Output,
} from '../../runner/v1/ExecRequest.js';
import type {
  ExecResponse as _runner_v1_ExecResponse,
  ExecResponse__Output as _runner_v1_ExecResponse__Output,
} from '../../runner/v1/ExecResponse.js';
import type {
  HeartbeatRequest as _runner_v1_HeartbeatRequest,
  HeartbeatRequest__Output as _runner_v1_HeartbeatRequest__Output,
} from '../../runner/v1/HeartbeatRequest.js';
import type {
  HeartbeatResponse as _runner_v1_HeartbeatResponse,
  HeartbeatResponse__Output as _runner_v1_HeartbeatResponse__Output,
} from '../../runner/v1/HeartbeatResponse.js';
import type {
  LogEntry as _runner_v1_LogEntry,
  LogEntry__Output as _runner_v1_LogEntry__Output,
} from '../../runner/v1/LogEntry.js';
import type {
  LogRequest as _runner_v1_LogRequest,
  LogRequest__Output as _runner_v1_LogRequest__Output,
} from '../../runner/v1/LogRequest.js';
import type {
  MetricsRequest as _runner_v1_MetricsRequest,
  MetricsRequest__Output as _runner_v1_MetricsRequest__Output,
} from '../../runner/v1/MetricsRequest.js';
import type {
  MetricsResponse as _runner_v1_MetricsResponse,
  MetricsResponse__Output as _runner_v1_MetricsResponse__Output,
} from '../../runner/v1/MetricsResponse.js';
import type {
  TaskRequest as _runner_v1_TaskRequest,
  TaskRequest__Output as _runner_v1_TaskRequest__Output,
} from '../../runner/v1/TaskRequest.js';
import type {
  TaskResponse as _runner_v1_TaskResponse,
  TaskResponse__Output as _runner_v1_TaskResponse__Output,
} from '../../runner/v1/TaskResponse.js';

/**
 * The operations carried by Connect (see the top of this file). The master calls ExecuteTask,
 * StreamLogs, GetMetrics, Exec and Control on the agent; Heartbeat goes the other way: the agent
 * sends a HeartbeatRequest every heartbeat interval and the master answers it.
 */
export interface AgentClient extends grpc.Client {
  /**
   * Restarts or stops the agent process.
   */
  Control(
    argument: _runner_v1_ControlRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_ControlResponse__Output>,
  ): grpc.ClientUnaryCall;
  Control(
    argument: _runner_v1_ControlRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runner_v1_ControlResponse__Output>,
  ): grpc.ClientUnaryCall;
  Control(
    argument: _runner_v1_ControlRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_ControlResponse__Output>,
  ): grpc.ClientUnaryCall;
  Control(
    argument: _runner_v1_ControlRequest,
    callback: grpc.requestCallback<_runner_v1_ControlResponse__Output>,
  ): grpc.ClientUnaryCall;
  /**
   * Restarts or stops the agent process.
   */
  control(
    argument: _runner_v1_ControlRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_ControlResponse__Output>,
  ): grpc.ClientUnaryCall;
  control(
    argument: _runner_v1_ControlRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runner_v1_ControlResponse__Output>,
  ): grpc.ClientUnaryCall;
  control(
    argument: _runner_v1_ControlRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_ControlResponse__Output>,
  ): grpc.ClientUnaryCall;
  control(
    argument: _runner_v1_ControlRequest,
    callback: grpc.requestCallback<_runner_v1_ControlResponse__Output>,
  ): grpc.ClientUnaryCall;

  /**
   * Runs a command on the agent's host.
   */
  Exec(
    argument: _runner_v1_ExecRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_ExecResponse__Output>,
  ): grpc.ClientUnaryCall;
  Exec(
    argument: _runner_v1_ExecRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runner_v1_ExecResponse__Output>,
  ): grpc.ClientUnaryCall;
  Exec(
    argument: _runner_v1_ExecRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_ExecResponse__Output>,
  ): grpc.ClientUnaryCall;
  Exec(
    argument: _runner_v1_ExecRequest,
    callback: grpc.requestCallback<_runner_v1_ExecResponse__Output>,
  ): grpc.ClientUnaryCall;
  /**
   * Runs a command on the agent's host.
   */
  exec(
    argument: _runner_v1_ExecRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_ExecResponse__Output>,
  ): grpc.ClientUnaryCall;
  exec(
    argument: _runner_v1_ExecRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runner_v1_ExecResponse__Output>,
  ): grpc.ClientUnaryCall;
  exec(
    argument: _runner_v1_ExecRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_ExecResponse__Output>,
  ): grpc.ClientUnaryCall;
  exec(
    argument: _runner_v1_ExecRequest,
    callback: grpc.requestCallback<_runner_v1_ExecResponse__Output>,
  ): grpc.ClientUnaryCall;

  /**
   * Runs a rendered Lua script with the agent's own runtime and modules. A handshake first: the
   * agent answers the request with `task_accepted` and waits; the master answers that with
   * `start_task`, and only then does the script run. So when the connection is lost before the
   * master sent `start_task`, the script certainly did not run and failover may give the task to
   * another agent; once it was sent, the task fails instead (it may have run in part). The task's
   * log lines (`log`, same call_id) stream while it runs, then the response. `cancel` with the
   * call_id stops the script.
   */
  ExecuteTask(
    argument: _runner_v1_TaskRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_TaskResponse__Output>,
  ): grpc.ClientUnaryCall;
  ExecuteTask(
    argument: _runner_v1_TaskRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runner_v1_TaskResponse__Output>,
  ): grpc.ClientUnaryCall;
  ExecuteTask(
    argument: _runner_v1_TaskRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_TaskResponse__Output>,
  ): grpc.ClientUnaryCall;
  ExecuteTask(
    argument: _runner_v1_TaskRequest,
    callback: grpc.requestCallback<_runner_v1_TaskResponse__Output>,
  ): grpc.ClientUnaryCall;
  /**
   * Runs a rendered Lua script with the agent's own runtime and modules. A handshake first: the
   * agent answers the request with `task_accepted` and waits; the master answers that with
   * `start_task`, and only then does the script run. So when the connection is lost before the
   * master sent `start_task`, the script certainly did not run and failover may give the task to
   * another agent; once it was sent, the task fails instead (it may have run in part). The task's
   * log lines (`log`, same call_id) stream while it runs, then the response. `cancel` with the
   * call_id stops the script.
   */
  executeTask(
    argument: _runner_v1_TaskRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_TaskResponse__Output>,
  ): grpc.ClientUnaryCall;
  executeTask(
    argument: _runner_v1_TaskRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runner_v1_TaskResponse__Output>,
  ): grpc.ClientUnaryCall;
  executeTask(
    argument: _runner_v1_TaskRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_TaskResponse__Output>,
  ): grpc.ClientUnaryCall;
  executeTask(
    argument: _runner_v1_TaskRequest,
    callback: grpc.requestCallback<_runner_v1_TaskResponse__Output>,
  ): grpc.ClientUnaryCall;

  /**
   * The metrics object of service.md section 2, with process, network and disk detail on request.
   */
  GetMetrics(
    argument: _runner_v1_MetricsRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_MetricsResponse__Output>,
  ): grpc.ClientUnaryCall;
  GetMetrics(
    argument: _runner_v1_MetricsRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runner_v1_MetricsResponse__Output>,
  ): grpc.ClientUnaryCall;
  GetMetrics(
    argument: _runner_v1_MetricsRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_MetricsResponse__Output>,
  ): grpc.ClientUnaryCall;
  GetMetrics(
    argument: _runner_v1_MetricsRequest,
    callback: grpc.requestCallback<_runner_v1_MetricsResponse__Output>,
  ): grpc.ClientUnaryCall;
  /**
   * The metrics object of service.md section 2, with process, network and disk detail on request.
   */
  getMetrics(
    argument: _runner_v1_MetricsRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_MetricsResponse__Output>,
  ): grpc.ClientUnaryCall;
  getMetrics(
    argument: _runner_v1_MetricsRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runner_v1_MetricsResponse__Output>,
  ): grpc.ClientUnaryCall;
  getMetrics(
    argument: _runner_v1_MetricsRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_MetricsResponse__Output>,
  ): grpc.ClientUnaryCall;
  getMetrics(
    argument: _runner_v1_MetricsRequest,
    callback: grpc.requestCallback<_runner_v1_MetricsResponse__Output>,
  ): grpc.ClientUnaryCall;

  /**
   * The agent's sign of life with a summary of its resource usage.
   */
  Heartbeat(
    argument: _runner_v1_HeartbeatRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  Heartbeat(
    argument: _runner_v1_HeartbeatRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runner_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  Heartbeat(
    argument: _runner_v1_HeartbeatRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  Heartbeat(
    argument: _runner_v1_HeartbeatRequest,
    callback: grpc.requestCallback<_runner_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  /**
   * The agent's sign of life with a summary of its resource usage.
   */
  heartbeat(
    argument: _runner_v1_HeartbeatRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  heartbeat(
    argument: _runner_v1_HeartbeatRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runner_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  heartbeat(
    argument: _runner_v1_HeartbeatRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  heartbeat(
    argument: _runner_v1_HeartbeatRequest,
    callback: grpc.requestCallback<_runner_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;

  /**
   * The agent's own log: `tail` recent lines, then new ones while `follow`, until `cancel`.
   */
  StreamLogs(
    argument: _runner_v1_LogRequest,
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_runner_v1_LogEntry__Output>;
  StreamLogs(
    argument: _runner_v1_LogRequest,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_runner_v1_LogEntry__Output>;
  /**
   * The agent's own log: `tail` recent lines, then new ones while `follow`, until `cancel`.
   */
  streamLogs(
    argument: _runner_v1_LogRequest,
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_runner_v1_LogEntry__Output>;
  streamLogs(
    argument: _runner_v1_LogRequest,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_runner_v1_LogEntry__Output>;
}

/**
 * The operations carried by Connect (see the top of this file). The master calls ExecuteTask,
 * StreamLogs, GetMetrics, Exec and Control on the agent; Heartbeat goes the other way: the agent
 * sends a HeartbeatRequest every heartbeat interval and the master answers it.
 */
export interface AgentHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Restarts or stops the agent process.
   */
  Control: grpc.handleUnaryCall<_runner_v1_ControlRequest__Output, _runner_v1_ControlResponse>;

  /**
   * Runs a command on the agent's host.
   */
  Exec: grpc.handleUnaryCall<_runner_v1_ExecRequest__Output, _runner_v1_ExecResponse>;

  /**
   * Runs a rendered Lua script with the agent's own runtime and modules. A handshake first: the
   * agent answers the request with `task_accepted` and waits; the master answers that with
   * `start_task`, and only then does the script run. So when the connection is lost before the
   * master sent `start_task`, the script certainly did not run and failover may give the task to
   * another agent; once it was sent, the task fails instead (it may have run in part). The task's
   * log lines (`log`, same call_id) stream while it runs, then the response. `cancel` with the
   * call_id stops the script.
   */
  ExecuteTask: grpc.handleUnaryCall<_runner_v1_TaskRequest__Output, _runner_v1_TaskResponse>;

  /**
   * The metrics object of service.md section 2, with process, network and disk detail on request.
   */
  GetMetrics: grpc.handleUnaryCall<_runner_v1_MetricsRequest__Output, _runner_v1_MetricsResponse>;

  /**
   * The agent's sign of life with a summary of its resource usage.
   */
  Heartbeat: grpc.handleUnaryCall<_runner_v1_HeartbeatRequest__Output, _runner_v1_HeartbeatResponse>;

  /**
   * The agent's own log: `tail` recent lines, then new ones while `follow`, until `cancel`.
   */
  StreamLogs: grpc.handleServerStreamingCall<_runner_v1_LogRequest__Output, _runner_v1_LogEntry>;
}

export interface AgentDefinition extends grpc.ServiceDefinition {
  Control: MethodDefinition<
    _runner_v1_ControlRequest,
    _runner_v1_ControlResponse,
    _runner_v1_ControlRequest__Output,
    _runner_v1_ControlResponse__Output
  >;
  Exec: MethodDefinition<
    _runner_v1_ExecRequest,
    _runner_v1_ExecResponse,
    _runner_v1_ExecRequest__Output,
    _runner_v1_ExecResponse__Output
  >;
  ExecuteTask: MethodDefinition<
    _runner_v1_TaskRequest,
    _runner_v1_TaskResponse,
    _runner_v1_TaskRequest__Output,
    _runner_v1_TaskResponse__Output
  >;
  GetMetrics: MethodDefinition<
    _runner_v1_MetricsRequest,
    _runner_v1_MetricsResponse,
    _runner_v1_MetricsRequest__Output,
    _runner_v1_MetricsResponse__Output
  >;
  Heartbeat: MethodDefinition<
    _runner_v1_HeartbeatRequest,
    _runner_v1_HeartbeatResponse,
    _runner_v1_HeartbeatRequest__Output,
    _runner_v1_HeartbeatResponse__Output
  >;
  StreamLogs: MethodDefinition<
    _runner_v1_LogRequest,
    _runner_v1_LogEntry,
    _runner_v1_LogRequest__Output,
    _runner_v1_LogEntry__Output
  >;
}
