// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

import type {
  Registered as _runner_v1_Registered,
  Registered__Output as _runner_v1_Registered__Output,
} from '../../runner/v1/Registered.js';
import type {
  HeartbeatResponse as _runner_v1_HeartbeatResponse,
  HeartbeatResponse__Output as _runner_v1_HeartbeatResponse__Output,
} from '../../runner/v1/HeartbeatResponse.js';
import type {
  TaskRequest as _runner_v1_TaskRequest,
  TaskRequest__Output as _runner_v1_TaskRequest__Output,
} from '../../runner/v1/TaskRequest.js';
import type {
  LogRequest as _runner_v1_LogRequest,
  LogRequest__Output as _runner_v1_LogRequest__Output,
} from '../../runner/v1/LogRequest.js';
import type {
  MetricsRequest as _runner_v1_MetricsRequest,
  MetricsRequest__Output as _runner_v1_MetricsRequest__Output,
} from '../../runner/v1/MetricsRequest.js';
import type {
  ExecRequest as _runner_v1_ExecRequest,
  ExecRequest__Output as _runner_v1_ExecRequest__Output,
} from '../../runner/v1/ExecRequest.js';
import type {
  ControlRequest as _runner_v1_ControlRequest,
  ControlRequest__Output as _runner_v1_ControlRequest__Output,
} from '../../runner/v1/ControlRequest.js';
import type {
  Cancel as _runner_v1_Cancel,
  Cancel__Output as _runner_v1_Cancel__Output,
} from '../../runner/v1/Cancel.js';
import type {
  Disconnect as _runner_v1_Disconnect,
  Disconnect__Output as _runner_v1_Disconnect__Output,
} from '../../runner/v1/Disconnect.js';
import type {
  TaskStart as _runner_v1_TaskStart,
  TaskStart__Output as _runner_v1_TaskStart__Output,
} from '../../runner/v1/TaskStart.js';
import type {
  StateResponse as _runner_v1_StateResponse,
  StateResponse__Output as _runner_v1_StateResponse__Output,
} from '../../runner/v1/StateResponse.js';
import type {
  TerminalOpen as _runner_v1_TerminalOpen,
  TerminalOpen__Output as _runner_v1_TerminalOpen__Output,
} from '../../runner/v1/TerminalOpen.js';
import type {
  TerminalInput as _runner_v1_TerminalInput,
  TerminalInput__Output as _runner_v1_TerminalInput__Output,
} from '../../runner/v1/TerminalInput.js';
import type {
  PutFileRequest as _runner_v1_PutFileRequest,
  PutFileRequest__Output as _runner_v1_PutFileRequest__Output,
} from '../../runner/v1/PutFileRequest.js';
import type {
  GetFileRequest as _runner_v1_GetFileRequest,
  GetFileRequest__Output as _runner_v1_GetFileRequest__Output,
} from '../../runner/v1/GetFileRequest.js';

/**
 * What the master sends on Connect.
 */
export interface MasterMessage {
  /**
   * Requests: a new id per call, unique on this stream. heartbeat: the id of the agent's request.
   */
  call_id?: number;
  registered?: _runner_v1_Registered | null;
  heartbeat?: _runner_v1_HeartbeatResponse | null;
  execute_task?: _runner_v1_TaskRequest | null;
  stream_logs?: _runner_v1_LogRequest | null;
  get_metrics?: _runner_v1_MetricsRequest | null;
  exec?: _runner_v1_ExecRequest | null;
  control?: _runner_v1_ControlRequest | null;
  /**
   * Stops the call `call_id` (a running task or a log stream).
   */
  cancel?: _runner_v1_Cancel | null;
  /**
   * The master ends the session; the stream closes after it.
   */
  disconnect?: _runner_v1_Disconnect | null;
  /**
   * ExecuteTask: run the task the agent accepted (the answer to `task_accepted`).
   */
  start_task?: _runner_v1_TaskStart | null;
  /**
   * The answer to the agent's `state` (call_id: the agent's id).
   */
  state_result?: _runner_v1_StateResponse | null;
  /**
   * Opens a shell on a PTY (see OpenTerminal in the Agent service).
   */
  open_terminal?: _runner_v1_TerminalOpen | null;
  /**
   * Keystrokes or a new size for the terminal `call_id`.
   */
  terminal_input?: _runner_v1_TerminalInput | null;
  put_file?: _runner_v1_PutFileRequest | null;
  get_file?: _runner_v1_GetFileRequest | null;
  body?:
    | 'registered'
    | 'heartbeat'
    | 'execute_task'
    | 'stream_logs'
    | 'get_metrics'
    | 'exec'
    | 'control'
    | 'cancel'
    | 'disconnect'
    | 'start_task'
    | 'state_result'
    | 'open_terminal'
    | 'terminal_input'
    | 'put_file'
    | 'get_file';
}

/**
 * What the master sends on Connect.
 */
export interface MasterMessage__Output {
  /**
   * Requests: a new id per call, unique on this stream. heartbeat: the id of the agent's request.
   */
  call_id: number;
  registered?: _runner_v1_Registered__Output | null;
  heartbeat?: _runner_v1_HeartbeatResponse__Output | null;
  execute_task?: _runner_v1_TaskRequest__Output | null;
  stream_logs?: _runner_v1_LogRequest__Output | null;
  get_metrics?: _runner_v1_MetricsRequest__Output | null;
  exec?: _runner_v1_ExecRequest__Output | null;
  control?: _runner_v1_ControlRequest__Output | null;
  /**
   * Stops the call `call_id` (a running task or a log stream).
   */
  cancel?: _runner_v1_Cancel__Output | null;
  /**
   * The master ends the session; the stream closes after it.
   */
  disconnect?: _runner_v1_Disconnect__Output | null;
  /**
   * ExecuteTask: run the task the agent accepted (the answer to `task_accepted`).
   */
  start_task?: _runner_v1_TaskStart__Output | null;
  /**
   * The answer to the agent's `state` (call_id: the agent's id).
   */
  state_result?: _runner_v1_StateResponse__Output | null;
  /**
   * Opens a shell on a PTY (see OpenTerminal in the Agent service).
   */
  open_terminal?: _runner_v1_TerminalOpen__Output | null;
  /**
   * Keystrokes or a new size for the terminal `call_id`.
   */
  terminal_input?: _runner_v1_TerminalInput__Output | null;
  put_file?: _runner_v1_PutFileRequest__Output | null;
  get_file?: _runner_v1_GetFileRequest__Output | null;
  body?:
    | 'registered'
    | 'heartbeat'
    | 'execute_task'
    | 'stream_logs'
    | 'get_metrics'
    | 'exec'
    | 'control'
    | 'cancel'
    | 'disconnect'
    | 'start_task'
    | 'state_result'
    | 'open_terminal'
    | 'terminal_input'
    | 'put_file'
    | 'get_file';
}
