import { readFileSync } from 'node:fs';
import { hostname, release, platform, arch } from 'node:os';
import {
  createRedactor,
  InvalidInputError,
  writePrivateFile,
  type Logger,
  type LuaModules,
  type LuaRuntime,
  type Redactor,
  type ResourceSettings,
} from '@runner/plugin-sdk';
import { AgentLog } from './agent-log.js';
import { AgentClient, type ClientState } from './client.js';
import type { AgentConfig } from './config.js';
import { runCommand } from './exec.js';
import { MetricsCollector } from './metrics.js';
import type { AgentEnd, AgentProcess } from './process.js';
import { StateCalls } from './state-calls.js';
import { runTask, maskTaskSecrets } from './task-runner.js';
import { getFile, openPty, putFile } from './pty.js';

export interface AgentServiceOptions {
  config: AgentConfig;
  runtime: LuaRuntime;
  modules: LuaModules;
  logger: Logger;
  version: string;
  /** Masks secrets in the agent's log and in everything a task sends to the master. */
  redactor?: Redactor;
  /** resources.*: the free space tasks need, and the reserves the reported capacity leaves out. */
  resources?: ResourceSettings;
  /** The file system whose free space resources.disk.min_free counts. */
  dataDir?: string;
}

/** The agent profile's pieces put together: the client, and what it serves with. */
export class AgentService implements AgentProcess {
  readonly name: string;
  readonly master: string;
  readonly ended: Promise<AgentEnd>;
  /** `state.*` of delegated tasks, forwarded to the master. */
  readonly stateCalls: StateCalls;
  private readonly client: AgentClient;
  private readonly log: AgentLog;
  private readonly metrics: MetricsCollector;
  private control!: (end: AgentEnd) => void;

  constructor(options: AgentServiceOptions) {
    const { config } = options;
    this.name = config.name;
    this.master = config.master;
    const redactor = options.redactor ?? createRedactor();
    this.log = new AgentLog(config.logLines, redactor);
    const logger = this.log.wrap(options.logger);
    this.metrics = new MetricsCollector({
      cacheMs: config.metricsCacheMs,
      diskPath: '/',
      processLimit: 200,
      resources: options.resources,
    });
    const controlled = new Promise<AgentEnd>((resolve) => (this.control = resolve));
    const credential = readCredential(config.credentialFile);
    // Whatever a task prints or returns, the credential never reaches the master's records.
    if (credential) redactor.addSecret(credential);
    this.stateCalls = new StateCalls({
      master: config.master,
      timeoutMs: config.stateTimeoutMs,
      send: (message) => this.client.send(message),
    });
    this.client = new AgentClient({
      name: config.name,
      master: config.master,
      masters: config.masters,
      token: config.token,
      credential,
      onCredential: (issued) => {
        redactor.addSecret(issued);
        writePrivateFile(config.credentialFile, `${issued}\n`).then(
          () =>
            logger.info(
              `enrolled with master ${config.master}: this agent's credential is in ${config.credentialFile} (mode 0600); it connects with it from now on`,
            ),
          (error: Error) =>
            logger.error(
              `enrolled with master ${config.master}, but cannot save the credential to ${config.credentialFile}: ${error.message}; this process keeps it until it ends, then the master refuses the name (make the data directory writable, then \`runner agent remove ${config.name}\` on the master)`,
            ),
        );
      },
      tls: config.tls && { rootCert: config.tls.rootCert, serverName: config.tls.serverName },
      labels: config.labels,
      // Read at each registration: module plugins set up after this one.
      modules: () =>
        options.modules
          .list()
          .map((m) => m.name)
          .sort(),
      version: options.version,
      hostname: hostname(),
      os: `${platform()} ${release()} ${arch()}`,
      uptime: () => this.metrics.uptime(),
      connectTimeoutMs: config.connectTimeoutMs,
      reconnect: config.reconnect,
      logger,
      maxMessageBytes: config.maxMessageBytes,
      masterCalls: this.stateCalls,
      handlers: {
        // What a task streams and returns leaves the process: its log lines, message and outputs.
        runTask: async (request, context) => {
          // A stack run's secrets (the `secrets` global) are masked here too while the task runs.
          const forget = maskTaskSecrets(redactor, request.globals_json);
          try {
            return redactor.redact(
              await runTask(
                request,
                {
                  agent: config.name,
                  runtime: options.runtime,
                  logger,
                  logBytes: config.taskLogBytes,
                  scriptEnvNames: config.scriptEnvNames,
                  minFree:
                    options.resources?.minFreeBytes && options.dataDir
                      ? { bytes: options.resources.minFreeBytes, path: options.dataDir }
                      : undefined,
                },
                { ...context, log: (entry) => context.log(redactor.redact(entry)) },
              ),
            );
          } finally {
            forget();
          }
        },
        metrics: (request) => this.metrics.collect(request),
        usage: () => {
          try {
            return this.metrics.usage();
          } catch (error) {
            // Reported in the heartbeat: the master shows the agent with status error.
            return {
              cpu_percent: 0,
              memory_percent: 0,
              disk_percent: 0,
              uptime: this.metrics.uptime(),
              error: `cannot read resource usage: ${(error as Error).message}`,
            };
          }
        },
        exec: (request, signal) => {
          logger.info(`running a command for the master: ${request.command || JSON.stringify(request.argv)}`);
          return runCommand(
            request,
            { defaultTimeoutMs: config.execTimeoutMs, outputBytes: config.execOutputBytes },
            signal,
          );
        },
        logs: (request) => ({
          recent: this.log.recent(request.tail),
          subscribe: (listener) => this.log.follow(listener),
        }),
        control: (action) => this.control(action === 'restart' ? { kind: 'restart' } : { kind: 'stop-requested' }),
        terminal: (request, output) => openPty({ rows: request.rows, cols: request.cols, term: request.term }, output),
        putFile: (request) => {
          logger.info(`writing ${request.path} for the master (terminal upload, ${request.data.length} bytes)`);
          return putFile(request.path, request.data, request.mode);
        },
        getFile: (request) => {
          logger.info(`reading ${request.path} for the master (terminal download)`);
          return getFile(request.path, Number(request.max_bytes));
        },
      },
    });
    this.ended = Promise.race([this.client.finished, controlled]);
    // First samples for CPU and network rates, so the first GetMetrics has rates to report.
    this.client.onRegistered(() => this.metrics.prime());
  }

  state(): ClientState {
    return this.client.state;
  }

  start(): void {
    this.client.start();
  }

  stop(): Promise<void> {
    return this.client.stop();
  }
}

/** The credential of an earlier enrolment, or undefined before the first one. */
function readCredential(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim() || undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new InvalidInputError(`cannot read the agent credential ${path}: ${(error as Error).message}`, {
      field: 'agent.credential',
    });
  }
}
