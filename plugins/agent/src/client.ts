import * as grpc from '@grpc/grpc-js';
import { sleep, type Logger } from '@runner/plugin-sdk';
import {
  loadRunnerProto,
  PROTOCOL_VERSION,
  type AgentMessage,
  type ControlAction__Output,
  type ExecRequest__Output,
  type ExecResponse,
  type LogEntry,
  type LogRequest__Output,
  type MasterClient,
  type MasterMessage__Output,
  type MetricsRequest__Output,
  type MetricsResponse,
  type ResourceUsage,
  type TaskRequest__Output,
  type TaskResponse,
  type GetFileRequest__Output,
  type PutFileRequest__Output,
  type TerminalOpen__Output,
} from '@runner/proto';
import { Reconnector, type ReconnectPolicy } from './reconnect.js';

export { StateCalls } from './state-calls.js';

/** What the agent does for the master's calls. Kernel-free, so tools and benchmarks can reuse the client. */
export interface AgentHandlers {
  /** Runs a delegated task; `log` streams its lines to the master as they are written. */
  runTask(
    request: TaskRequest__Output,
    context: { signal: AbortSignal; log(entry: LogEntry): void },
  ): Promise<TaskResponse>;
  metrics(request: MetricsRequest__Output): Promise<MetricsResponse>;
  /** The heartbeat's summary: cheap and synchronous, it runs every heartbeat interval. */
  usage(): ResourceUsage & { error?: string };
  exec(request: ExecRequest__Output, signal: AbortSignal): Promise<ExecResponse>;
  /** The agent's own log: recent lines, and a subscription to new ones. */
  logs(request: LogRequest__Output): {
    recent: LogEntry[];
    subscribe?(listener: (entry: LogEntry) => void): () => void;
  };
  /** Called once the master has the answer to a Control call. */
  control(action: 'restart' | 'stop'): void;
  /** OpenTerminal: a shell on a PTY; `output` streams what it prints. Absent: the call is refused. */
  terminal?(
    request: TerminalOpen__Output,
    output: (data: Buffer) => void,
  ): { write(data: Buffer): void; resize(rows: number, cols: number): void; exited: Promise<number>; close(): void };
  /** PutFile: writes the file, answers the bytes written. */
  putFile?(request: PutFileRequest__Output): Promise<number>;
  /** GetFile: the file's content. */
  getFile?(request: GetFileRequest__Output): Promise<Buffer>;
}

export interface TlsOptions {
  /** PEM of the certificate (or CA) to trust; the system's roots when absent. */
  rootCert?: Buffer;
  /** Name to check the certificate against when it differs from the host dialled. */
  serverName?: string;
}

export interface AgentClientOptions {
  name: string;
  /** `host:port` of the master. */
  master: string;
  /**
   * Every master sharing one store (`--master a:50053,b:50053`), `master` among them: after a
   * lost session or a failed attempt the next one is tried, with the same backoff and jitter.
   */
  masters?: string[];
  token?: string;
  /** The agent's own credential from an earlier enrolment (agent identities), when it has one. */
  credential?: string;
  /**
   * Called when the master enrols the agent and issues it a credential: store it privately. The
   * client presents it on every later connection of this process either way.
   */
  onCredential?(credential: string): void;
  /** TLS when set. */
  tls?: TlsOptions;
  labels?: Record<string, string>;
  /** Lua modules the agent has, read at each registration. */
  modules?: () => string[];
  version: string;
  hostname: string;
  os: string;
  /** Seconds the process has run, for registration. */
  uptime(): number;
  /** Time allowed for the connection and registration. */
  connectTimeoutMs: number;
  reconnect: ReconnectPolicy;
  logger: Logger;
  handlers: AgentHandlers;
  maxMessageBytes?: number;
  /** Called when the master answers a heartbeat, with the round trip in milliseconds. */
  onHeartbeat?(roundTripMs: number): void;
  /** Extra channel options (benchmarks open many connections from one process). */
  channelOptions?: grpc.ChannelOptions;
  /** The agent's own calls to the master (state-calls.ts): their answers, and the end of each session. */
  masterCalls?: { deliver(message: MasterMessage__Output): void; connectionEnded(reason: string): void };
}

/** Why the client stopped for good. */
export type AgentOutcome =
  | { kind: 'stopped' }
  /** The master refused the agent (token, name, protocol): retrying cannot help. */
  | { kind: 'refused'; message: string; code: number }
  /** The master ended the session and asked the agent not to reconnect (removed, or replaced). */
  | { kind: 'dismissed'; message: string }
  | { kind: 'gave-up'; message: string };

export type ClientState = 'connecting' | 'registered' | 'waiting' | 'circuit-open' | 'finished';

interface SessionEnd {
  registered: boolean;
  reason: string;
  code?: number;
  dismissed?: string;
}

/** Status codes that mean the master will refuse this agent again, whatever the delay. */
const PERMANENT = new Set<number>([
  grpc.status.UNAUTHENTICATED,
  grpc.status.PERMISSION_DENIED,
  grpc.status.INVALID_ARGUMENT,
  grpc.status.FAILED_PRECONDITION,
  // The name is enrolled by another agent: the join token cannot take it.
  grpc.status.ALREADY_EXISTS,
]);

/**
 * The agent's connection to its master: dials out, registers, heartbeats, serves the master's
 * calls, and reconnects after a loss under the reconnection policy (backoff with jitter, a
 * maximum retry count, a circuit breaker). `finished` resolves when it stops for good.
 */
export class AgentClient {
  readonly finished: Promise<AgentOutcome>;
  state: ClientState = 'connecting';
  /** Settings the master sent at the last registration. */
  session?: { heartbeatIntervalMs: number; heartbeatTimeoutMs: number; address: string; masterVersion: string };
  private finish!: (outcome: AgentOutcome) => void;
  private readonly reconnector: Reconnector;
  private readonly wake = new AbortController();
  private stopping = false;
  private current?: { stream: grpc.ClientDuplexStream<AgentMessage, MasterMessage__Output>; client: MasterClient };
  private readonly registeredListeners = new Set<() => void>();
  private readonly running = new Map<number, AbortController>();
  /** Open terminals by the call id of their OpenTerminal (their input arrives with it). */
  private readonly terminals = new Map<number, ReturnType<NonNullable<AgentHandlers['terminal']>>>();
  /** Tasks accepted and waiting for the master's `start_task`. */
  private readonly accepted = new Map<number, TaskRequest__Output>();
  private credential?: string;

  /** Which of `options.masters` is dialled. */
  private masterIndex = 0;

  constructor(private readonly options: AgentClientOptions) {
    this.credential = options.credential;
    this.reconnector = new Reconnector(options.reconnect);
    // grpc-js writes its own errors to the console; the ones that matter end a connection attempt
    // and are logged by the reconnection loop, so its lines go to the debug log.
    grpc.setLogger({ error: (...args: unknown[]) => options.logger.debug(`grpc: ${args.map(String).join(' ')}`) });
    this.finished = new Promise((resolve) => (this.finish = resolve));
  }

  /** Starts connecting; returns at once. */
  start(): void {
    void this.loop().then(
      (outcome) => {
        this.state = 'finished';
        this.finish(outcome);
      },
      (error: Error) => {
        this.state = 'finished';
        this.finish({ kind: 'gave-up', message: `the connection loop failed: ${error.message}` });
      },
    );
  }

  /** Called at every registration (the first and each reconnection). */
  onRegistered(listener: () => void): () => void {
    this.registeredListeners.add(listener);
    return () => void this.registeredListeners.delete(listener);
  }

  /** Writes on the registered session; false when there is none. */
  send(message: AgentMessage): boolean {
    if (this.state !== 'registered' || !this.current) return false;
    this.current.stream.write(message);
    return true;
  }

  /** Tasks and calls being served now. */
  get inFlight(): number {
    return this.running.size;
  }

  /** Closes the session (the master marks the agent offline at once) and stops reconnecting. */
  async stop(): Promise<void> {
    if (this.stopping) return this.finished.then(() => undefined);
    this.stopping = true;
    this.wake.abort();
    const current = this.current;
    if (current) {
      current.stream.end();
      // Give the master a moment to see the end of the stream before the connection goes.
      await Promise.race([new Promise((resolve) => current.stream.once('close', resolve)), sleep(500)]);
      current.stream.cancel();
      current.client.close();
    }
    await this.finished;
  }

  /** The master the next connection dials. */
  private get address(): string {
    const masters = this.options.masters ?? [];
    return masters.length > 0 ? (masters[this.masterIndex % masters.length] as string) : this.options.master;
  }

  /** With several masters, the next one is tried; returns the words saying so (empty with one). */
  private rotate(): string {
    const masters = this.options.masters ?? [];
    if (masters.length < 2) return '';
    this.masterIndex = (this.masterIndex + 1) % masters.length;
    return ` to ${this.address}`;
  }

  private async loop(): Promise<AgentOutcome> {
    const { logger, name } = this.options;
    for (;;) {
      const master = this.address;
      if (this.stopping) return { kind: 'stopped' };
      this.state = 'connecting';
      const end = await this.connectOnce();
      if (this.stopping) return { kind: 'stopped' };
      if (end.dismissed !== undefined) return { kind: 'dismissed', message: end.dismissed };
      if (end.code !== undefined && PERMANENT.has(end.code)) {
        return { kind: 'refused', code: end.code, message: `master ${master} refused agent ${name}: ${end.reason}` };
      }
      let delayMs: number;
      if (end.registered) {
        this.reconnector.succeeded();
        delayMs = this.reconnector.afterLoss().delayMs;
        logger.warn(`lost the master ${master}: ${end.reason}; reconnecting${this.rotate()} in ${seconds(delayMs)}`, {
          master,
        });
        this.state = 'waiting';
      } else {
        const next = this.reconnector.failed();
        const then = this.rotate();
        if (next.kind === 'give-up') {
          return {
            kind: 'gave-up',
            message: `gave up connecting to master ${master} after ${next.failures} failed attempts (agent.reconnect_max_retries); last error: ${end.reason}`,
          };
        }
        delayMs = next.delayMs;
        if (next.kind === 'circuit-open') {
          this.state = 'circuit-open';
          logger.warn(
            `cannot reach master ${master} (${next.failures} failures in a row, last: ${end.reason}); circuit breaker open: next attempt${then} in ${seconds(delayMs)}`,
            { master },
          );
        } else {
          this.state = 'waiting';
          logger.warn(
            `cannot reach master ${master}: ${end.reason}; retry ${next.failures}${then} in ${seconds(delayMs)}`,
            {
              master,
            },
          );
        }
      }
      await sleep(delayMs, this.wake.signal);
    }
  }

  /** One connection: resolves when it ends, saying whether it got as far as registering. */
  private connectOnce(): Promise<SessionEnd> {
    const { options } = this;
    const proto = loadRunnerProto().runner.v1;
    const credentials = options.tls
      ? grpc.credentials.createSsl(options.tls.rootCert ?? null)
      : grpc.credentials.createInsecure();
    // A fresh channel per attempt with its own subchannel: the reconnection policy, not grpc-js's
    // internal backoff, decides when the next TCP connection is tried.
    const client = new proto.Master(this.address, credentials, {
      'grpc.use_local_subchannel_pool': 1,
      'grpc.max_receive_message_length': options.maxMessageBytes ?? 16 * 1024 * 1024,
      'grpc.max_send_message_length': options.maxMessageBytes ?? 16 * 1024 * 1024,
      ...(options.tls?.serverName
        ? { 'grpc.ssl_target_name_override': options.tls.serverName, 'grpc.default_authority': options.tls.serverName }
        : {}),
      ...options.channelOptions,
    }) as unknown as MasterClient;
    const metadata = new grpc.Metadata();
    // Both when the agent has both: a master that no longer knows the credential (the agent was
    // removed, or the master's store is new) enrols the agent again with the join token.
    if (options.token) metadata.set('authorization', `Bearer ${options.token}`);
    if (this.credential) metadata.set('x-runner-agent-credential', this.credential);
    metadata.set('x-runner-agent', options.name);
    const stream = client.Connect(metadata);
    this.current = { stream, client };

    return new Promise<SessionEnd>((resolve) => {
      let registered = false;
      let dismissed: string | undefined;
      let lastSeen = Date.now();
      let heartbeat: NodeJS.Timeout | undefined;
      let watchdog: NodeJS.Timeout | undefined;
      let heartbeatId = 0;
      let heartbeatSent = { id: 0, at: 0 };
      const connectTimer = setTimeout(
        () => end(`no answer to register within ${seconds(options.connectTimeoutMs)}`),
        options.connectTimeoutMs,
      );
      let done = false;
      const end = (reason: string, code?: number) => {
        if (done) return;
        done = true;
        clearTimeout(connectTimer);
        clearInterval(heartbeat);
        clearInterval(watchdog);
        // Tasks of a lost session are stopped: the master has already failed them.
        for (const controller of this.running.values())
          controller.abort(new Error(`the connection to the master ended: ${reason}`));
        this.running.clear();
        this.accepted.clear();
        options.masterCalls?.connectionEnded(reason);
        stream.removeAllListeners('data');
        stream.cancel();
        client.close();
        if (this.current?.stream === stream) this.current = undefined;
        resolve({ registered, reason, code, dismissed });
      };
      const send = (message: AgentMessage) => {
        if (!done) stream.write(message);
      };

      stream.on('data', (message: MasterMessage__Output) => {
        lastSeen = Date.now();
        if (!registered) {
          if (message.body !== 'registered' || !message.registered)
            return end(`unexpected ${message.body} before registered`);
          registered = true;
          clearTimeout(connectTimer);
          const r = message.registered;
          if (r.credential) {
            this.credential = r.credential;
            options.onCredential?.(r.credential);
          }
          this.session = {
            heartbeatIntervalMs: r.heartbeat_interval * 1000,
            heartbeatTimeoutMs: r.heartbeat_timeout * 1000,
            address: r.address,
            masterVersion: r.master_version,
          };
          this.state = 'registered';
          const { heartbeatIntervalMs, heartbeatTimeoutMs } = this.session;
          const beat = () => {
            const { error, ...usage } = options.handlers.usage();
            heartbeatSent = { id: ++heartbeatId, at: performance.now() };
            send({ call_id: heartbeatId, heartbeat: { usage, running_tasks: this.running.size, error: error ?? '' } });
          };
          heartbeat = setInterval(beat, heartbeatIntervalMs);
          // A master that stopped answering (frozen, or the path to it silently gone) is given up
          // like a broken stream, so the agent reconnects instead of waiting forever.
          watchdog = setInterval(
            () => {
              if (Date.now() - lastSeen > heartbeatTimeoutMs)
                end(`no answer from the master for ${seconds(Date.now() - lastSeen)}`);
            },
            Math.max(50, Math.min(heartbeatIntervalMs, heartbeatTimeoutMs / 4)),
          );
          for (const listener of this.registeredListeners) listener();
          beat();
          options.logger.info(
            `registered with master ${this.address} as ${options.name} (heartbeat every ${seconds(heartbeatIntervalMs)})`,
            { master: this.address },
          );
          return;
        }
        if (message.body === 'heartbeat') {
          if (message.call_id === heartbeatSent.id) options.onHeartbeat?.(performance.now() - heartbeatSent.at);
          return;
        }
        if (message.body === 'state_result') return options.masterCalls?.deliver(message);
        this.dispatch(message, send, (reason) => (dismissed = reason));
      });
      stream.on('error', (error: grpc.ServiceError) => end(error.details || error.message, error.code));
      stream.on('end', () => end(dismissed !== undefined ? `dismissed: ${dismissed}` : 'the master closed the stream'));
      stream.on('status', (status: grpc.StatusObject) => {
        if (status.code !== grpc.status.OK) end(status.details, status.code);
      });

      send({
        register: {
          protocol_version: PROTOCOL_VERSION,
          name: options.name,
          version: options.version,
          hostname: options.hostname,
          os: options.os,
          labels: options.labels ?? {},
          modules: options.modules?.() ?? [],
          pid: process.pid,
          uptime: options.uptime(),
        },
      });
    });
  }

  /** Serves one of the master's messages after registration. */
  private dispatch(
    message: MasterMessage__Output,
    send: (message: AgentMessage) => void,
    dismiss: (reason: string) => void,
  ): void {
    const { handlers, logger } = this.options;
    const id = message.call_id;
    const fail = (error: unknown) =>
      send({
        call_id: id,
        failed: {
          code: (error as { code?: string }).code ?? 'internal',
          message: (error as Error).message ?? String(error),
        },
      });
    const track = () => {
      const controller = new AbortController();
      this.running.set(id, controller);
      return controller;
    };
    const untrack = (controller: AbortController) => {
      if (this.running.get(id) === controller) this.running.delete(id);
    };
    switch (message.body) {
      case 'heartbeat':
        return;
      case 'execute_task': {
        // The handshake of ExecuteTask (runner.proto): accept, and run once the master says start.
        this.accepted.set(id, message.execute_task as TaskRequest__Output);
        track();
        send({ call_id: id, task_accepted: {} });
        return;
      }
      case 'start_task': {
        const request = this.accepted.get(id);
        const controller = this.running.get(id);
        this.accepted.delete(id);
        if (!request || !controller) return;
        handlers
          .runTask(request, { signal: controller.signal, log: (entry) => send({ call_id: id, log: entry }) })
          .then((result) => send({ call_id: id, task_result: result }), fail)
          .finally(() => untrack(controller));
        return;
      }
      case 'stream_logs': {
        const request = message.stream_logs as LogRequest__Output;
        const { recent, subscribe } = handlers.logs(request);
        for (const entry of recent) send({ call_id: id, log: entry });
        if (request.follow && subscribe) {
          const controller = track();
          const unsubscribe = subscribe((entry) => send({ call_id: id, log: entry }));
          controller.signal.addEventListener('abort', unsubscribe, { once: true });
        }
        return;
      }
      case 'get_metrics':
        handlers
          .metrics(message.get_metrics as MetricsRequest__Output)
          .then((metrics) => send({ call_id: id, metrics }), fail);
        return;
      case 'exec': {
        const controller = track();
        handlers
          .exec(message.exec as ExecRequest__Output, controller.signal)
          .then((result) => send({ call_id: id, exec_result: result }), fail)
          .finally(() => untrack(controller));
        return;
      }
      case 'open_terminal': {
        if (!handlers.terminal) return fail({ code: 'unsupported_call', message: 'this agent serves no terminal' });
        const controller = track();
        const request = message.open_terminal as TerminalOpen__Output;
        logger.info(`opening a terminal for the master (${request.cols}x${request.rows})`);
        const pty = handlers.terminal(request, (data) => send({ call_id: id, terminal_output: { data } }));
        this.terminals.set(id, pty);
        controller.signal.addEventListener('abort', () => pty.close(), { once: true });
        pty.exited
          .then((code) => send({ call_id: id, terminal_exit: { exit_code: code } }), fail)
          .finally(() => {
            this.terminals.delete(id);
            untrack(controller);
          });
        return;
      }
      case 'terminal_input': {
        const pty = this.terminals.get(id);
        const input = message.terminal_input;
        if (!pty || !input) return;
        if (input.data.length > 0) pty.write(input.data);
        if (input.rows > 0 && input.cols > 0) pty.resize(input.rows, input.cols);
        return;
      }
      case 'put_file': {
        if (!handlers.putFile) return fail({ code: 'unsupported_call', message: 'this agent serves no file upload' });
        handlers
          .putFile(message.put_file as PutFileRequest__Output)
          .then((bytes) => send({ call_id: id, file_result: { bytes } }), fail);
        return;
      }
      case 'get_file': {
        if (!handlers.getFile) return fail({ code: 'unsupported_call', message: 'this agent serves no file download' });
        handlers
          .getFile(message.get_file as GetFileRequest__Output)
          .then((data) => send({ call_id: id, file_result: { data, bytes: data.length } }), fail);
        return;
      }
      case 'control': {
        const action = (message.control?.action ?? 'CONTROL_ACTION_UNSPECIFIED') as ControlAction__Output;
        if (action !== 'CONTROL_ACTION_RESTART' && action !== 'CONTROL_ACTION_STOP') {
          return fail({ code: 'unsupported_call', message: `unknown control action ${action}` });
        }
        send({ call_id: id, control_result: {} });
        const what = action === 'CONTROL_ACTION_RESTART' ? 'restart' : 'stop';
        logger.info(`the master asked this agent to ${what}`);
        // After the answer is on its way: stopping closes the stream it travels on.
        setTimeout(() => handlers.control(what), 50);
        return;
      }
      case 'cancel': {
        this.accepted.delete(id);
        const controller = this.running.get(id);
        if (controller) {
          this.running.delete(id);
          controller.abort(new Error(message.cancel?.reason || 'cancelled by the master'));
        }
        return;
      }
      case 'disconnect': {
        const reason = message.disconnect?.reason || 'the master ended the session';
        if (message.disconnect?.reconnect === false) dismiss(reason);
        logger.warn(`the master ended the session: ${reason}`);
        return;
      }
      default:
        if (id)
          fail({
            code: 'unsupported_call',
            message: `this agent does not serve ${message.body ?? 'an empty message'}`,
          });
    }
  }
}

function seconds(ms: number): string {
  return ms >= 1000 ? `${+(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}
