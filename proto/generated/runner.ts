// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type {
  AgentClient as _runner_v1_AgentClient,
  AgentDefinition as _runner_v1_AgentDefinition,
} from './runner/v1/Agent.js';
import type {
  AgentMessage as _runner_v1_AgentMessage,
  AgentMessage__Output as _runner_v1_AgentMessage__Output,
} from './runner/v1/AgentMessage.js';
import type {
  CallFailed as _runner_v1_CallFailed,
  CallFailed__Output as _runner_v1_CallFailed__Output,
} from './runner/v1/CallFailed.js';
import type { Cancel as _runner_v1_Cancel, Cancel__Output as _runner_v1_Cancel__Output } from './runner/v1/Cancel.js';
import type {
  ControlRequest as _runner_v1_ControlRequest,
  ControlRequest__Output as _runner_v1_ControlRequest__Output,
} from './runner/v1/ControlRequest.js';
import type {
  ControlResponse as _runner_v1_ControlResponse,
  ControlResponse__Output as _runner_v1_ControlResponse__Output,
} from './runner/v1/ControlResponse.js';
import type { Cpu as _runner_v1_Cpu, Cpu__Output as _runner_v1_Cpu__Output } from './runner/v1/Cpu.js';
import type {
  DescribeRequest as _runner_v1_DescribeRequest,
  DescribeRequest__Output as _runner_v1_DescribeRequest__Output,
} from './runner/v1/DescribeRequest.js';
import type {
  DescribeResponse as _runner_v1_DescribeResponse,
  DescribeResponse__Output as _runner_v1_DescribeResponse__Output,
} from './runner/v1/DescribeResponse.js';
import type {
  Disconnect as _runner_v1_Disconnect,
  Disconnect__Output as _runner_v1_Disconnect__Output,
} from './runner/v1/Disconnect.js';
import type { Disk as _runner_v1_Disk, Disk__Output as _runner_v1_Disk__Output } from './runner/v1/Disk.js';
import type {
  DiskUsage as _runner_v1_DiskUsage,
  DiskUsage__Output as _runner_v1_DiskUsage__Output,
} from './runner/v1/DiskUsage.js';
import type {
  ExecRequest as _runner_v1_ExecRequest,
  ExecRequest__Output as _runner_v1_ExecRequest__Output,
} from './runner/v1/ExecRequest.js';
import type {
  ExecResponse as _runner_v1_ExecResponse,
  ExecResponse__Output as _runner_v1_ExecResponse__Output,
} from './runner/v1/ExecResponse.js';
import type {
  FileResult as _runner_v1_FileResult,
  FileResult__Output as _runner_v1_FileResult__Output,
} from './runner/v1/FileResult.js';
import type {
  GetFileRequest as _runner_v1_GetFileRequest,
  GetFileRequest__Output as _runner_v1_GetFileRequest__Output,
} from './runner/v1/GetFileRequest.js';
import type {
  HeartbeatRequest as _runner_v1_HeartbeatRequest,
  HeartbeatRequest__Output as _runner_v1_HeartbeatRequest__Output,
} from './runner/v1/HeartbeatRequest.js';
import type {
  HeartbeatResponse as _runner_v1_HeartbeatResponse,
  HeartbeatResponse__Output as _runner_v1_HeartbeatResponse__Output,
} from './runner/v1/HeartbeatResponse.js';
import type {
  LogEntry as _runner_v1_LogEntry,
  LogEntry__Output as _runner_v1_LogEntry__Output,
} from './runner/v1/LogEntry.js';
import type {
  LogRequest as _runner_v1_LogRequest,
  LogRequest__Output as _runner_v1_LogRequest__Output,
} from './runner/v1/LogRequest.js';
import type {
  MasterClient as _runner_v1_MasterClient,
  MasterDefinition as _runner_v1_MasterDefinition,
} from './runner/v1/Master.js';
import type {
  MasterMessage as _runner_v1_MasterMessage,
  MasterMessage__Output as _runner_v1_MasterMessage__Output,
} from './runner/v1/MasterMessage.js';
import type { Memory as _runner_v1_Memory, Memory__Output as _runner_v1_Memory__Output } from './runner/v1/Memory.js';
import type {
  Metrics as _runner_v1_Metrics,
  Metrics__Output as _runner_v1_Metrics__Output,
} from './runner/v1/Metrics.js';
import type {
  MetricsRequest as _runner_v1_MetricsRequest,
  MetricsRequest__Output as _runner_v1_MetricsRequest__Output,
} from './runner/v1/MetricsRequest.js';
import type {
  MetricsResponse as _runner_v1_MetricsResponse,
  MetricsResponse__Output as _runner_v1_MetricsResponse__Output,
} from './runner/v1/MetricsResponse.js';
import type {
  NetworkInterface as _runner_v1_NetworkInterface,
  NetworkInterface__Output as _runner_v1_NetworkInterface__Output,
} from './runner/v1/NetworkInterface.js';
import type {
  NetworkRate as _runner_v1_NetworkRate,
  NetworkRate__Output as _runner_v1_NetworkRate__Output,
} from './runner/v1/NetworkRate.js';
import type {
  Process as _runner_v1_Process,
  Process__Output as _runner_v1_Process__Output,
} from './runner/v1/Process.js';
import type {
  PutFileRequest as _runner_v1_PutFileRequest,
  PutFileRequest__Output as _runner_v1_PutFileRequest__Output,
} from './runner/v1/PutFileRequest.js';
import type {
  Register as _runner_v1_Register,
  Register__Output as _runner_v1_Register__Output,
} from './runner/v1/Register.js';
import type {
  Registered as _runner_v1_Registered,
  Registered__Output as _runner_v1_Registered__Output,
} from './runner/v1/Registered.js';
import type {
  ResourceUsage as _runner_v1_ResourceUsage,
  ResourceUsage__Output as _runner_v1_ResourceUsage__Output,
} from './runner/v1/ResourceUsage.js';
import type {
  StateRequest as _runner_v1_StateRequest,
  StateRequest__Output as _runner_v1_StateRequest__Output,
} from './runner/v1/StateRequest.js';
import type {
  StateResponse as _runner_v1_StateResponse,
  StateResponse__Output as _runner_v1_StateResponse__Output,
} from './runner/v1/StateResponse.js';
import type {
  TaskAccepted as _runner_v1_TaskAccepted,
  TaskAccepted__Output as _runner_v1_TaskAccepted__Output,
} from './runner/v1/TaskAccepted.js';
import type {
  TaskRequest as _runner_v1_TaskRequest,
  TaskRequest__Output as _runner_v1_TaskRequest__Output,
} from './runner/v1/TaskRequest.js';
import type {
  TaskResponse as _runner_v1_TaskResponse,
  TaskResponse__Output as _runner_v1_TaskResponse__Output,
} from './runner/v1/TaskResponse.js';
import type {
  TaskStart as _runner_v1_TaskStart,
  TaskStart__Output as _runner_v1_TaskStart__Output,
} from './runner/v1/TaskStart.js';
import type {
  TerminalData as _runner_v1_TerminalData,
  TerminalData__Output as _runner_v1_TerminalData__Output,
} from './runner/v1/TerminalData.js';
import type {
  TerminalExit as _runner_v1_TerminalExit,
  TerminalExit__Output as _runner_v1_TerminalExit__Output,
} from './runner/v1/TerminalExit.js';
import type {
  TerminalInput as _runner_v1_TerminalInput,
  TerminalInput__Output as _runner_v1_TerminalInput__Output,
} from './runner/v1/TerminalInput.js';
import type {
  TerminalOpen as _runner_v1_TerminalOpen,
  TerminalOpen__Output as _runner_v1_TerminalOpen__Output,
} from './runner/v1/TerminalOpen.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new (...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  runner: {
    v1: {
      /**
       * The operations carried by Connect (see the top of this file). The master calls ExecuteTask,
       * StreamLogs, GetMetrics, Exec and Control on the agent; Heartbeat goes the other way: the agent
       * sends a HeartbeatRequest every heartbeat interval and the master answers it.
       */
      Agent: SubtypeConstructor<typeof grpc.Client, _runner_v1_AgentClient> & { service: _runner_v1_AgentDefinition };
      AgentMessage: MessageTypeDefinition<_runner_v1_AgentMessage, _runner_v1_AgentMessage__Output>;
      CallFailed: MessageTypeDefinition<_runner_v1_CallFailed, _runner_v1_CallFailed__Output>;
      Cancel: MessageTypeDefinition<_runner_v1_Cancel, _runner_v1_Cancel__Output>;
      ControlAction: EnumTypeDefinition;
      ControlRequest: MessageTypeDefinition<_runner_v1_ControlRequest, _runner_v1_ControlRequest__Output>;
      ControlResponse: MessageTypeDefinition<_runner_v1_ControlResponse, _runner_v1_ControlResponse__Output>;
      Cpu: MessageTypeDefinition<_runner_v1_Cpu, _runner_v1_Cpu__Output>;
      DescribeRequest: MessageTypeDefinition<_runner_v1_DescribeRequest, _runner_v1_DescribeRequest__Output>;
      DescribeResponse: MessageTypeDefinition<_runner_v1_DescribeResponse, _runner_v1_DescribeResponse__Output>;
      Disconnect: MessageTypeDefinition<_runner_v1_Disconnect, _runner_v1_Disconnect__Output>;
      Disk: MessageTypeDefinition<_runner_v1_Disk, _runner_v1_Disk__Output>;
      DiskUsage: MessageTypeDefinition<_runner_v1_DiskUsage, _runner_v1_DiskUsage__Output>;
      ExecRequest: MessageTypeDefinition<_runner_v1_ExecRequest, _runner_v1_ExecRequest__Output>;
      ExecResponse: MessageTypeDefinition<_runner_v1_ExecResponse, _runner_v1_ExecResponse__Output>;
      FileResult: MessageTypeDefinition<_runner_v1_FileResult, _runner_v1_FileResult__Output>;
      GetFileRequest: MessageTypeDefinition<_runner_v1_GetFileRequest, _runner_v1_GetFileRequest__Output>;
      HeartbeatRequest: MessageTypeDefinition<_runner_v1_HeartbeatRequest, _runner_v1_HeartbeatRequest__Output>;
      HeartbeatResponse: MessageTypeDefinition<_runner_v1_HeartbeatResponse, _runner_v1_HeartbeatResponse__Output>;
      LogEntry: MessageTypeDefinition<_runner_v1_LogEntry, _runner_v1_LogEntry__Output>;
      LogLevel: EnumTypeDefinition;
      LogRequest: MessageTypeDefinition<_runner_v1_LogRequest, _runner_v1_LogRequest__Output>;
      /**
       * Served by the master on its gRPC port (config grpc.port, default 50053).
       */
      Master: SubtypeConstructor<typeof grpc.Client, _runner_v1_MasterClient> & {
        service: _runner_v1_MasterDefinition;
      };
      MasterMessage: MessageTypeDefinition<_runner_v1_MasterMessage, _runner_v1_MasterMessage__Output>;
      Memory: MessageTypeDefinition<_runner_v1_Memory, _runner_v1_Memory__Output>;
      Metrics: MessageTypeDefinition<_runner_v1_Metrics, _runner_v1_Metrics__Output>;
      MetricsRequest: MessageTypeDefinition<_runner_v1_MetricsRequest, _runner_v1_MetricsRequest__Output>;
      MetricsResponse: MessageTypeDefinition<_runner_v1_MetricsResponse, _runner_v1_MetricsResponse__Output>;
      NetworkInterface: MessageTypeDefinition<_runner_v1_NetworkInterface, _runner_v1_NetworkInterface__Output>;
      NetworkRate: MessageTypeDefinition<_runner_v1_NetworkRate, _runner_v1_NetworkRate__Output>;
      Process: MessageTypeDefinition<_runner_v1_Process, _runner_v1_Process__Output>;
      PutFileRequest: MessageTypeDefinition<_runner_v1_PutFileRequest, _runner_v1_PutFileRequest__Output>;
      Register: MessageTypeDefinition<_runner_v1_Register, _runner_v1_Register__Output>;
      Registered: MessageTypeDefinition<_runner_v1_Registered, _runner_v1_Registered__Output>;
      ResourceUsage: MessageTypeDefinition<_runner_v1_ResourceUsage, _runner_v1_ResourceUsage__Output>;
      StateRequest: MessageTypeDefinition<_runner_v1_StateRequest, _runner_v1_StateRequest__Output>;
      StateResponse: MessageTypeDefinition<_runner_v1_StateResponse, _runner_v1_StateResponse__Output>;
      TaskAccepted: MessageTypeDefinition<_runner_v1_TaskAccepted, _runner_v1_TaskAccepted__Output>;
      TaskRequest: MessageTypeDefinition<_runner_v1_TaskRequest, _runner_v1_TaskRequest__Output>;
      TaskResponse: MessageTypeDefinition<_runner_v1_TaskResponse, _runner_v1_TaskResponse__Output>;
      TaskStart: MessageTypeDefinition<_runner_v1_TaskStart, _runner_v1_TaskStart__Output>;
      TerminalData: MessageTypeDefinition<_runner_v1_TerminalData, _runner_v1_TerminalData__Output>;
      TerminalExit: MessageTypeDefinition<_runner_v1_TerminalExit, _runner_v1_TerminalExit__Output>;
      TerminalInput: MessageTypeDefinition<_runner_v1_TerminalInput, _runner_v1_TerminalInput__Output>;
      TerminalOpen: MessageTypeDefinition<_runner_v1_TerminalOpen, _runner_v1_TerminalOpen__Output>;
    };
  };
}
