// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

import type {
  Register as _runner_v1_Register,
  Register__Output as _runner_v1_Register__Output,
} from '../../runner/v1/Register.js';
import type {
  HeartbeatRequest as _runner_v1_HeartbeatRequest,
  HeartbeatRequest__Output as _runner_v1_HeartbeatRequest__Output,
} from '../../runner/v1/HeartbeatRequest.js';
import type {
  TaskAccepted as _runner_v1_TaskAccepted,
  TaskAccepted__Output as _runner_v1_TaskAccepted__Output,
} from '../../runner/v1/TaskAccepted.js';
import type {
  LogEntry as _runner_v1_LogEntry,
  LogEntry__Output as _runner_v1_LogEntry__Output,
} from '../../runner/v1/LogEntry.js';
import type {
  TaskResponse as _runner_v1_TaskResponse,
  TaskResponse__Output as _runner_v1_TaskResponse__Output,
} from '../../runner/v1/TaskResponse.js';
import type {
  MetricsResponse as _runner_v1_MetricsResponse,
  MetricsResponse__Output as _runner_v1_MetricsResponse__Output,
} from '../../runner/v1/MetricsResponse.js';
import type {
  ExecResponse as _runner_v1_ExecResponse,
  ExecResponse__Output as _runner_v1_ExecResponse__Output,
} from '../../runner/v1/ExecResponse.js';
import type {
  ControlResponse as _runner_v1_ControlResponse,
  ControlResponse__Output as _runner_v1_ControlResponse__Output,
} from '../../runner/v1/ControlResponse.js';
import type {
  CallFailed as _runner_v1_CallFailed,
  CallFailed__Output as _runner_v1_CallFailed__Output,
} from '../../runner/v1/CallFailed.js';
import type {
  StateRequest as _runner_v1_StateRequest,
  StateRequest__Output as _runner_v1_StateRequest__Output,
} from '../../runner/v1/StateRequest.js';
import type {
  TerminalData as _runner_v1_TerminalData,
  TerminalData__Output as _runner_v1_TerminalData__Output,
} from '../../runner/v1/TerminalData.js';
import type {
  TerminalExit as _runner_v1_TerminalExit,
  TerminalExit__Output as _runner_v1_TerminalExit__Output,
} from '../../runner/v1/TerminalExit.js';
import type {
  FileResult as _runner_v1_FileResult,
  FileResult__Output as _runner_v1_FileResult__Output,
} from '../../runner/v1/FileResult.js';

/**
 * What the agent sends on Connect.
 */
export interface AgentMessage {
  /**
   * For answers: the call_id of the master's request. For heartbeat: an id the agent picks, which
   * the master's HeartbeatResponse repeats. 0 on register.
   */
  call_id?: number;
  register?: _runner_v1_Register | null;
  heartbeat?: _runner_v1_HeartbeatRequest | null;
  /**
   * ExecuteTask: the agent has the task and waits for `start_task`.
   */
  task_accepted?: _runner_v1_TaskAccepted | null;
  /**
   * A log line of a running task (call_id of its TaskRequest) or of StreamLogs (call_id of the
   * LogRequest).
   */
  log?: _runner_v1_LogEntry | null;
  task_result?: _runner_v1_TaskResponse | null;
  metrics?: _runner_v1_MetricsResponse | null;
  exec_result?: _runner_v1_ExecResponse | null;
  control_result?: _runner_v1_ControlResponse | null;
  /**
   * The agent could not serve the call (unknown request, a failure before any result).
   */
  failed?: _runner_v1_CallFailed | null;
  /**
   * `state.*` in a delegated task: the master runs it on its store and answers `state_result`
   * with the same call_id (an id the agent picks, as for heartbeat).
   */
  state?: _runner_v1_StateRequest | null;
  /**
   * OpenTerminal: what the shell printed (call_id of the OpenTerminal request).
   */
  terminal_output?: _runner_v1_TerminalData | null;
  /**
   * OpenTerminal: the shell ended; the call is over.
   */
  terminal_exit?: _runner_v1_TerminalExit | null;
  /**
   * PutFile and GetFile.
   */
  file_result?: _runner_v1_FileResult | null;
  body?:
    | 'register'
    | 'heartbeat'
    | 'task_accepted'
    | 'log'
    | 'task_result'
    | 'metrics'
    | 'exec_result'
    | 'control_result'
    | 'failed'
    | 'state'
    | 'terminal_output'
    | 'terminal_exit'
    | 'file_result';
}

/**
 * What the agent sends on Connect.
 */
export interface AgentMessage__Output {
  /**
   * For answers: the call_id of the master's request. For heartbeat: an id the agent picks, which
   * the master's HeartbeatResponse repeats. 0 on register.
   */
  call_id: number;
  register?: _runner_v1_Register__Output | null;
  heartbeat?: _runner_v1_HeartbeatRequest__Output | null;
  /**
   * ExecuteTask: the agent has the task and waits for `start_task`.
   */
  task_accepted?: _runner_v1_TaskAccepted__Output | null;
  /**
   * A log line of a running task (call_id of its TaskRequest) or of StreamLogs (call_id of the
   * LogRequest).
   */
  log?: _runner_v1_LogEntry__Output | null;
  task_result?: _runner_v1_TaskResponse__Output | null;
  metrics?: _runner_v1_MetricsResponse__Output | null;
  exec_result?: _runner_v1_ExecResponse__Output | null;
  control_result?: _runner_v1_ControlResponse__Output | null;
  /**
   * The agent could not serve the call (unknown request, a failure before any result).
   */
  failed?: _runner_v1_CallFailed__Output | null;
  /**
   * `state.*` in a delegated task: the master runs it on its store and answers `state_result`
   * with the same call_id (an id the agent picks, as for heartbeat).
   */
  state?: _runner_v1_StateRequest__Output | null;
  /**
   * OpenTerminal: what the shell printed (call_id of the OpenTerminal request).
   */
  terminal_output?: _runner_v1_TerminalData__Output | null;
  /**
   * OpenTerminal: the shell ended; the call is over.
   */
  terminal_exit?: _runner_v1_TerminalExit__Output | null;
  /**
   * PutFile and GetFile.
   */
  file_result?: _runner_v1_FileResult__Output | null;
  body?:
    | 'register'
    | 'heartbeat'
    | 'task_accepted'
    | 'log'
    | 'task_result'
    | 'metrics'
    | 'exec_result'
    | 'control_result'
    | 'failed'
    | 'state'
    | 'terminal_output'
    | 'terminal_exit'
    | 'file_result';
}
