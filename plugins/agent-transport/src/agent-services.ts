// The two services the rest of the master uses, built on the transport's state: the registry
// (AgentRegistry: list, inspect, control, revoke) and task delegation (AgentDelegator).
import {
  InvalidInputError,
  isRunnerError,
  RunnerError,
  type Agent,
  type AgentDelegator,
  type AgentExecResult,
  type AgentRegistry,
  type AgentTerminals,
  type DelegatedResult,
  type EventBus,
  type Logger,
  type LuaValue,
} from '@runner/plugin-sdk';
import type { AgentMessage__Output, MetricsResponse__Output } from '@runner/proto';
import type { AgentStore } from './agent-store.js';
import type { MasterTransportConfig } from './config.js';
import { AgentUnreachableError, unknownAgent } from './errors.js';
import type { AgentIdentities } from './identities.js';
import type { AgentSession, CallOptions, MasterRequest } from './session.js';
import {
  toAgentLog,
  toDisk,
  toFacts,
  toInterface,
  toMetrics,
  toProcess,
  toTaskLog,
  type AgentRecord,
} from './wire-shapes.js';

/** What AgentMaster shares with its services. */
export interface MasterState {
  readonly records: Map<string, AgentRecord>;
  readonly listeners: Set<(agent: Agent) => void>;
  readonly config: MasterTransportConfig;
  readonly logger: Logger;
  readonly events?: Pick<EventBus, 'emit'>;
  readonly store?: AgentStore;
  readonly identities: AgentIdentities;
  /** An agent as the registry shows it (with its identity). */
  view(record: AgentRecord): Agent;
  /** Tells the registry's listeners about a change. */
  changed(record: AgentRecord): void;
}

const EXEC_MARGIN_MS = 10_000;

class StreamEnded extends Error {}

function sessionOf(state: MasterState, name: string): AgentSession {
  const record = state.records.get(name);
  if (!record) throw unknownAgent(name);
  if (!record.session) throw new AgentUnreachableError(name, `offline since ${record.last_heartbeat}`);
  return record.session;
}

function calls(state: MasterState) {
  const call = (name: string, body: MasterRequest, options: CallOptions): Promise<AgentMessage__Output> =>
    sessionOf(state, name).request(body, options);
  const getMetrics = async (
    name: string,
    detail: { processes?: boolean; network?: boolean; disks?: boolean },
  ): Promise<MetricsResponse__Output> => {
    const answer = await call(
      name,
      { get_metrics: detail },
      { what: 'GetMetrics', timeoutMs: state.config.callTimeoutMs },
    );
    return answer.metrics as MetricsResponse__Output;
  };
  return { call, getMetrics };
}

export function createRegistry(state: MasterState): AgentRegistry {
  const { call, getMetrics } = calls(state);
  return {
    list: () => [...state.records.values()].sort((a, b) => a.name.localeCompare(b.name)).map(state.view),
    get: (name) => {
      const record = state.records.get(name);
      return record && state.view(record);
    },
    remove: async (name) => {
      const record = state.records.get(name);
      if (!record) throw unknownAgent(name);
      state.records.delete(name);
      state.store?.delete(name);
      await state.identities.forget(name);
      if (record.session) {
        record.session.close('removed from the master', {
          disconnect: { reason: 'removed from the master', reconnect: false },
        });
        state.events?.emit('agent.disconnected', {
          agent_name: name,
          address: record.address,
          status: 'offline',
        });
      }
      state.logger.info(`agent ${name} removed`, { agent: name });
      const agent = state.view({ ...record, session: undefined, status: 'offline' });
      for (const listener of state.listeners) listener(agent);
    },
    revoke: async (name) => {
      const record = state.records.get(name);
      if (!record) throw unknownAgent(name);
      const identity = await state.identities.revoke(name);
      state.logger.warn(`agent ${name}: credential revoked; the agent cannot reconnect`, { agent: name });
      const reason = `the credential of agent ${name} was revoked on the master at ${identity.revoked_at}`;
      // Closing the session marks the agent offline and tells the listeners; else tell them here.
      if (record.session) record.session.close(reason, { disconnect: { reason, reconnect: false } });
      else state.changed(record);
      return state.view(record);
    },
    metrics: async (name) => toMetrics((await getMetrics(name, {})).metrics),
    processes: async (name) => (await getMetrics(name, { processes: true })).processes.map(toProcess),
    network: async (name) => (await getMetrics(name, { network: true })).network.map(toInterface),
    disks: async (name) => (await getMetrics(name, { disks: true })).disks.map(toDisk),
    exec: async (name, command, options = {}) => {
      const argv = Array.isArray(command) ? command : [];
      if (Array.isArray(command) ? command.length === 0 || !command[0] : !command.trim()) {
        throw new InvalidInputError('exec: command must not be empty', { field: 'command' });
      }
      const timeoutMs = options.timeoutMs ?? 0;
      const answer = await call(
        name,
        {
          exec: {
            command: Array.isArray(command) ? '' : command,
            argv,
            cwd: options.cwd ?? '',
            timeout_ms: Math.max(0, Math.round(timeoutMs)),
          },
        },
        // The agent enforces the command's timeout (its default when 0); this only covers a lost answer.
        { what: 'Exec', timeoutMs: (timeoutMs || state.config.callTimeoutMs * 10) + EXEC_MARGIN_MS },
      );
      const result = answer.exec_result;
      return {
        stdout: result?.stdout ?? '',
        stderr: result?.stderr ?? '',
        exit_code: result?.exited ? result.exit_code : null,
        timed_out: result?.timed_out ?? false,
        duration: result?.duration ?? 0,
      } satisfies AgentExecResult;
    },
    restart: async (name) => {
      await call(
        name,
        { control: { action: 'CONTROL_ACTION_RESTART' } },
        { what: 'Control(restart)', timeoutMs: state.config.callTimeoutMs },
      );
    },
    stop: async (name) => {
      await call(
        name,
        { control: { action: 'CONTROL_ACTION_STOP' } },
        { what: 'Control(stop)', timeoutMs: state.config.callTimeoutMs },
      );
    },
    streamLogs: async (name, onEntry, signal) => {
      if (signal.aborted) return;
      // Resolves when the caller aborts; rejects when the agent goes away meanwhile.
      await call(
        name,
        { stream_logs: { tail: state.config.logTail, follow: true } },
        {
          what: 'StreamLogs',
          signal,
          abortError: () => new StreamEnded(),
          onLog: (entry) => onEntry(toAgentLog(entry)),
        },
      ).catch((error: unknown) => {
        if (!(error instanceof StreamEnded)) throw error;
      });
    },
    onChange: (listener) => {
      state.listeners.add(listener);
      return () => void state.listeners.delete(listener);
    },
  };
}

const LOOPBACK = /^(?:ipv4:)?127\.|^(?:ipv6:)?\[?::1\]?|^(?:ipv6:)?\[?::ffff:127\./;

/**
 * A stack run's secrets (the task's `secrets` global) travel to an agent only over TLS, or over
 * loopback (they never leave the host); `grpc.insecure_secrets` allows it otherwise.
 */
function refuseSecretsInClear(config: MasterTransportConfig, session: AgentSession, globals: Record<string, unknown>) {
  const secrets = globals.secrets;
  if (config.tlsCert || config.insecureSecrets || LOOPBACK.test(session.address)) return;
  if (!secrets || typeof secrets !== 'object' || Object.keys(secrets).length === 0) return;
  throw new RunnerError(
    'secrets_need_tls',
    `agent ${session.name} connects from ${session.address} over gRPC without TLS: a stack run's secrets are not sent in clear ` +
      '(serve TLS with runner server --tls-cert/--tls-key or grpc.tls_cert/grpc.tls_key, or set grpc.insecure_secrets: true)',
    { status: 400, details: { agent: session.name } },
  );
}

export function createDelegator(state: MasterState): AgentDelegator {
  return {
    agent: (name) => {
      const record = state.records.get(name);
      return record && toFacts(record);
    },
    names: () => [...state.records.keys()],
    isAvailable: (name) => state.records.get(name)?.session !== undefined,
    execute: async (name, task, { signal, onLog }): Promise<DelegatedResult> => {
      const session = sessionOf(state, name);
      refuseSecretsInClear(state.config, session, task.globals);
      const answer = await session.request(
        {
          execute_task: {
            run_id: task.runId,
            workflow: task.workflowName,
            task: task.task,
            unit: task.unit,
            script: task.script,
            globals_json: JSON.stringify(task.globals),
            dry_run: task.dryRun,
            timeout_ms: task.timeoutMs ? Math.round(task.timeoutMs) : 0,
            attempt: task.attempt,
            memory_limit_mib: task.memoryLimitBytes ? Math.ceil(task.memoryLimitBytes / (1024 * 1024)) : 0,
          },
        },
        {
          what: 'the task',
          task: true,
          delegated: { runId: task.runId, workflow: task.workflowName, task: task.task, dryRun: task.dryRun },
          signal,
          // The agent enforces the task's timeout; past it plus the heartbeat timeout the answer is lost.
          timeoutMs: task.timeoutMs ? task.timeoutMs + state.config.heartbeatTimeoutMs : undefined,
          abortError: () => {
            const reason = signal.reason as unknown;
            return isRunnerError(reason)
              ? reason
              : new RunnerError('cancelled', `task ${task.unit} on agent ${name} was cancelled`, { status: 409 });
          },
          onLog: (entry) => onLog(toTaskLog(entry)),
        },
      );
      const result = answer.task_result;
      return {
        success: result?.success === true,
        message: result?.message || undefined,
        outputs: result?.outputs_json ? (JSON.parse(result.outputs_json) as Record<string, LuaValue>) : undefined,
      };
    },
  };
}

/** Terminals and file copies on this master's agents, each on the agent's own session. */
export function createTerminals(state: MasterState): AgentTerminals {
  return {
    open: async (name, size, output) => {
      const session = sessionOf(state, name);
      const controller = new AbortController();
      let id = 0;
      const exited = session
        .request(
          { open_terminal: { rows: size.rows, cols: size.cols, term: size.term ?? '' } },
          {
            what: 'OpenTerminal',
            signal: controller.signal,
            abortError: () => new StreamEnded(),
            onId: (callId) => (id = callId),
            onOutput: output,
          },
        )
        .then(
          (answer) => answer.terminal_exit?.exit_code ?? -1,
          (error: unknown) => {
            // Closed from here: the shell was hung up on, which is its end.
            if (error instanceof StreamEnded) return -1;
            throw error;
          },
        );
      return {
        write: (data) => session.send({ call_id: id, terminal_input: { data: Buffer.from(data), rows: 0, cols: 0 } }),
        resize: (rows, cols) => session.send({ call_id: id, terminal_input: { data: Buffer.alloc(0), rows, cols } }),
        close: () => controller.abort(),
        exited,
      };
    },
    putFile: async (name, path, data, mode = 0o600) => {
      const answer = await sessionOf(state, name).request(
        { put_file: { path, data, mode } },
        { what: 'PutFile', timeoutMs: state.config.callTimeoutMs * 4 },
      );
      return Number(answer.file_result?.bytes ?? 0);
    },
    getFile: async (name, path, maxBytes) => {
      const answer = await sessionOf(state, name).request(
        { get_file: { path, max_bytes: maxBytes } },
        { what: 'GetFile', timeoutMs: state.config.callTimeoutMs * 4 },
      );
      return Buffer.from(answer.file_result?.data ?? Buffer.alloc(0));
    },
  };
}
