// Types of index.js. The message types are the ones proto-loader-gen-types generated from
// runner.proto (generated/, never edited by hand); `X` is what a sender may pass, `X__Output` what
// a receiver gets (every field present, oneofs named in `body`).
import type { ProtoGrpcType } from './generated/runner.js';

export type { ProtoGrpcType } from './generated/runner.js';
export type { MasterClient, MasterHandlers } from './generated/runner/v1/Master.js';
export type { AgentMessage, AgentMessage__Output } from './generated/runner/v1/AgentMessage.js';
export type { CallFailed, CallFailed__Output } from './generated/runner/v1/CallFailed.js';
export type { Cancel, Cancel__Output } from './generated/runner/v1/Cancel.js';
export type { ControlAction, ControlAction__Output } from './generated/runner/v1/ControlAction.js';
export type { ControlRequest, ControlRequest__Output } from './generated/runner/v1/ControlRequest.js';
export type { ControlResponse, ControlResponse__Output } from './generated/runner/v1/ControlResponse.js';
export type { Cpu, Cpu__Output } from './generated/runner/v1/Cpu.js';
export type { DescribeRequest, DescribeRequest__Output } from './generated/runner/v1/DescribeRequest.js';
export type { DescribeResponse, DescribeResponse__Output } from './generated/runner/v1/DescribeResponse.js';
export type { Disconnect, Disconnect__Output } from './generated/runner/v1/Disconnect.js';
export type { Disk, Disk__Output } from './generated/runner/v1/Disk.js';
export type { DiskUsage, DiskUsage__Output } from './generated/runner/v1/DiskUsage.js';
export type { ExecRequest, ExecRequest__Output } from './generated/runner/v1/ExecRequest.js';
export type { ExecResponse, ExecResponse__Output } from './generated/runner/v1/ExecResponse.js';
export type { HeartbeatRequest, HeartbeatRequest__Output } from './generated/runner/v1/HeartbeatRequest.js';
export type { HeartbeatResponse, HeartbeatResponse__Output } from './generated/runner/v1/HeartbeatResponse.js';
export type { LogEntry, LogEntry__Output } from './generated/runner/v1/LogEntry.js';
export type { LogLevel, LogLevel__Output } from './generated/runner/v1/LogLevel.js';
export type { LogRequest, LogRequest__Output } from './generated/runner/v1/LogRequest.js';
export type { TerminalOpen, TerminalOpen__Output } from './generated/runner/v1/TerminalOpen.js';
export type { TerminalInput, TerminalInput__Output } from './generated/runner/v1/TerminalInput.js';
export type { TerminalData, TerminalData__Output } from './generated/runner/v1/TerminalData.js';
export type { TerminalExit, TerminalExit__Output } from './generated/runner/v1/TerminalExit.js';
export type { PutFileRequest, PutFileRequest__Output } from './generated/runner/v1/PutFileRequest.js';
export type { GetFileRequest, GetFileRequest__Output } from './generated/runner/v1/GetFileRequest.js';
export type { FileResult, FileResult__Output } from './generated/runner/v1/FileResult.js';
export type { MasterMessage, MasterMessage__Output } from './generated/runner/v1/MasterMessage.js';
export type { Memory, Memory__Output } from './generated/runner/v1/Memory.js';
export type { Metrics, Metrics__Output } from './generated/runner/v1/Metrics.js';
export type { MetricsRequest, MetricsRequest__Output } from './generated/runner/v1/MetricsRequest.js';
export type { MetricsResponse, MetricsResponse__Output } from './generated/runner/v1/MetricsResponse.js';
export type { NetworkInterface, NetworkInterface__Output } from './generated/runner/v1/NetworkInterface.js';
export type { NetworkRate, NetworkRate__Output } from './generated/runner/v1/NetworkRate.js';
export type { Process, Process__Output } from './generated/runner/v1/Process.js';
export type { Register, Register__Output } from './generated/runner/v1/Register.js';
export type { Registered, Registered__Output } from './generated/runner/v1/Registered.js';
export type { ResourceUsage, ResourceUsage__Output } from './generated/runner/v1/ResourceUsage.js';
export type { StateRequest, StateRequest__Output } from './generated/runner/v1/StateRequest.js';
export type { StateResponse, StateResponse__Output } from './generated/runner/v1/StateResponse.js';
export type { TaskAccepted, TaskAccepted__Output } from './generated/runner/v1/TaskAccepted.js';
export type { TaskRequest, TaskRequest__Output } from './generated/runner/v1/TaskRequest.js';
export type { TaskResponse, TaskResponse__Output } from './generated/runner/v1/TaskResponse.js';
export type { TaskStart, TaskStart__Output } from './generated/runner/v1/TaskStart.js';

export declare const PROTO_FILE: string;
/** The revision of the protocol this copy speaks (Register.protocol_version). */
export declare const PROTOCOL_VERSION: number;
/** The @grpc/proto-loader options the generated types assume. */
export declare const LOADER_OPTIONS: Readonly<{
  keepCase: true;
  longs: NumberConstructor;
  enums: StringConstructor;
  defaults: true;
  oneofs: true;
}>;
/** The runner.v1 package as grpc-js service constructors, parsed once per process. */
export declare function loadRunnerProto(): ProtoGrpcType;
/**
 * Asks the master at `address` (`host:port` of its gRPC port) where its REST API is; rejects with
 * an Error saying what went wrong in a user's words.
 */
export declare function describeMaster(
  address: string,
  options?: { tls?: { rootCert?: Buffer; serverName?: string }; timeoutMs?: number },
): Promise<import('./generated/runner/v1/DescribeResponse.js').DescribeResponse__Output>;
