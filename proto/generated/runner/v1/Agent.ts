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
  FileResult as _runner_v1_FileResult,
  FileResult__Output as _runner_v1_FileResult__Output,
} from '../../runner/v1/FileResult.js';
import type {
  GetFileRequest as _runner_v1_GetFileRequest,
  GetFileRequest__Output as _runner_v1_GetFileRequest__Output,
} from '../../runner/v1/GetFileRequest.js';
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
  PutFileRequest as _runner_v1_PutFileRequest,
  PutFileRequest__Output as _runner_v1_PutFileRequest__Output,
} from '../../runner/v1/PutFileRequest.js';
import type {
  TaskRequest as _runner_v1_TaskRequest,
  TaskRequest__Output as _runner_v1_TaskRequest__Output,
} from '../../runner/v1/TaskRequest.js';
import type {
  TaskResponse as _runner_v1_TaskResponse,
  TaskResponse__Output as _runner_v1_TaskResponse__Output,
} from '../../runner/v1/TaskResponse.js';
import type {
  TerminalExit as _runner_v1_TerminalExit,
  TerminalExit__Output as _runner_v1_TerminalExit__Output,
} from '../../runner/v1/TerminalExit.js';
import type {
  TerminalOpen as _runner_v1_TerminalOpen,
  TerminalOpen__Output as _runner_v1_TerminalOpen__Output,
} from '../../runner/v1/TerminalOpen.js';

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
   * Reads a file on the agent's host (the terminal's download), refused past `max_bytes`.
   */
  GetFile(
    argument: _runner_v1_GetFileRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_FileResult__Output>,
  ): grpc.ClientUnaryCall;
  GetFile(
    argument: _runner_v1_GetFileRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runner_v1_FileResult__Output>,
  ): grpc.ClientUnaryCall;
  GetFile(
    argument: _runner_v1_GetFileRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_FileResult__Output>,
  ): grpc.ClientUnaryCall;
  GetFile(
    argument: _runner_v1_GetFileRequest,
    callback: grpc.requestCallback<_runner_v1_FileResult__Output>,
  ): grpc.ClientUnaryCall;
  /**
   * Reads a file on the agent's host (the terminal's download), refused past `max_bytes`.
   */
  getFile(
    argument: _runner_v1_GetFileRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_FileResult__Output>,
  ): grpc.ClientUnaryCall;
  getFile(
    argument: _runner_v1_GetFileRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runner_v1_FileResult__Output>,
  ): grpc.ClientUnaryCall;
  getFile(
    argument: _runner_v1_GetFileRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_FileResult__Output>,
  ): grpc.ClientUnaryCall;
  getFile(
    argument: _runner_v1_GetFileRequest,
    callback: grpc.requestCallback<_runner_v1_FileResult__Output>,
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
   * An interactive shell on a pseudo-terminal, as the agent's user, for the terminal page. The
   * master sends `terminal_input` (keystrokes, a resize) with the call's id while it is open; the
   * agent streams `terminal_output` and ends with `terminal_exit`; `cancel` closes the shell.
   */
  OpenTerminal(
    argument: _runner_v1_TerminalOpen,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_TerminalExit__Output>,
  ): grpc.ClientUnaryCall;
  OpenTerminal(
    argument: _runner_v1_TerminalOpen,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runner_v1_TerminalExit__Output>,
  ): grpc.ClientUnaryCall;
  OpenTerminal(
    argument: _runner_v1_TerminalOpen,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_TerminalExit__Output>,
  ): grpc.ClientUnaryCall;
  OpenTerminal(
    argument: _runner_v1_TerminalOpen,
    callback: grpc.requestCallback<_runner_v1_TerminalExit__Output>,
  ): grpc.ClientUnaryCall;
  /**
   * An interactive shell on a pseudo-terminal, as the agent's user, for the terminal page. The
   * master sends `terminal_input` (keystrokes, a resize) with the call's id while it is open; the
   * agent streams `terminal_output` and ends with `terminal_exit`; `cancel` closes the shell.
   */
  openTerminal(
    argument: _runner_v1_TerminalOpen,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_TerminalExit__Output>,
  ): grpc.ClientUnaryCall;
  openTerminal(
    argument: _runner_v1_TerminalOpen,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runner_v1_TerminalExit__Output>,
  ): grpc.ClientUnaryCall;
  openTerminal(
    argument: _runner_v1_TerminalOpen,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_TerminalExit__Output>,
  ): grpc.ClientUnaryCall;
  openTerminal(
    argument: _runner_v1_TerminalOpen,
    callback: grpc.requestCallback<_runner_v1_TerminalExit__Output>,
  ): grpc.ClientUnaryCall;

  /**
   * Writes a file on the agent's host (the terminal's upload), as the agent's user.
   */
  PutFile(
    argument: _runner_v1_PutFileRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_FileResult__Output>,
  ): grpc.ClientUnaryCall;
  PutFile(
    argument: _runner_v1_PutFileRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runner_v1_FileResult__Output>,
  ): grpc.ClientUnaryCall;
  PutFile(
    argument: _runner_v1_PutFileRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_FileResult__Output>,
  ): grpc.ClientUnaryCall;
  PutFile(
    argument: _runner_v1_PutFileRequest,
    callback: grpc.requestCallback<_runner_v1_FileResult__Output>,
  ): grpc.ClientUnaryCall;
  /**
   * Writes a file on the agent's host (the terminal's upload), as the agent's user.
   */
  putFile(
    argument: _runner_v1_PutFileRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_FileResult__Output>,
  ): grpc.ClientUnaryCall;
  putFile(
    argument: _runner_v1_PutFileRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runner_v1_FileResult__Output>,
  ): grpc.ClientUnaryCall;
  putFile(
    argument: _runner_v1_PutFileRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runner_v1_FileResult__Output>,
  ): grpc.ClientUnaryCall;
  putFile(
    argument: _runner_v1_PutFileRequest,
    callback: grpc.requestCallback<_runner_v1_FileResult__Output>,
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
   * Reads a file on the agent's host (the terminal's download), refused past `max_bytes`.
   */
  GetFile: grpc.handleUnaryCall<_runner_v1_GetFileRequest__Output, _runner_v1_FileResult>;

  /**
   * The metrics object of service.md section 2, with process, network and disk detail on request.
   */
  GetMetrics: grpc.handleUnaryCall<_runner_v1_MetricsRequest__Output, _runner_v1_MetricsResponse>;

  /**
   * The agent's sign of life with a summary of its resource usage.
   */
  Heartbeat: grpc.handleUnaryCall<_runner_v1_HeartbeatRequest__Output, _runner_v1_HeartbeatResponse>;

  /**
   * An interactive shell on a pseudo-terminal, as the agent's user, for the terminal page. The
   * master sends `terminal_input` (keystrokes, a resize) with the call's id while it is open; the
   * agent streams `terminal_output` and ends with `terminal_exit`; `cancel` closes the shell.
   */
  OpenTerminal: grpc.handleUnaryCall<_runner_v1_TerminalOpen__Output, _runner_v1_TerminalExit>;

  /**
   * Writes a file on the agent's host (the terminal's upload), as the agent's user.
   */
  PutFile: grpc.handleUnaryCall<_runner_v1_PutFileRequest__Output, _runner_v1_FileResult>;

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
  GetFile: MethodDefinition<
    _runner_v1_GetFileRequest,
    _runner_v1_FileResult,
    _runner_v1_GetFileRequest__Output,
    _runner_v1_FileResult__Output
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
  OpenTerminal: MethodDefinition<
    _runner_v1_TerminalOpen,
    _runner_v1_TerminalExit,
    _runner_v1_TerminalOpen__Output,
    _runner_v1_TerminalExit__Output
  >;
  PutFile: MethodDefinition<
    _runner_v1_PutFileRequest,
    _runner_v1_FileResult,
    _runner_v1_PutFileRequest__Output,
    _runner_v1_FileResult__Output
  >;
  StreamLogs: MethodDefinition<
    _runner_v1_LogRequest,
    _runner_v1_LogEntry,
    _runner_v1_LogRequest__Output,
    _runner_v1_LogEntry__Output
  >;
}
