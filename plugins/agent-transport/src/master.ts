import * as grpc from '@grpc/grpc-js';
import {
  AGENT_NAME_PATTERN,
  AGENT_NAME_RULE,
  RunnerError,
  type Agent,
  type AgentDelegator,
  type AgentTerminals,
  type AgentRegistry,
  type AgentStatus,
  type EventBus,
  type Logger,
  type StateService,
  type Store,
  type Cluster,
} from '@runner/plugin-sdk';
import {
  loadRunnerProto,
  PROTOCOL_VERSION,
  type AgentMessage__Output,
  type DescribeRequest__Output,
  type DescribeResponse,
  type HeartbeatRequest__Output,
  type MasterMessage,
  type Register__Output,
} from '@runner/proto';
import { createDelegator, createRegistry, createTerminals, type MasterState } from './agent-services.js';
import { AgentStore } from './agent-store.js';
import { readPem, type MasterTransportConfig } from './config.js';
import { formatMs } from './errors.js';
import {
  AgentIdentities,
  CREDENTIAL_HEADER,
  isRefusal,
  type Identity,
  type Proof,
  type Refusal,
} from './identities.js';
import { AgentSession } from './session.js';
import { serveState } from './state-proxy.js';
import type { JoinTokens } from './token.js';
import { round, toAgent, type AgentRecord } from './wire-shapes.js';

/** Points below the warning threshold every resource must fall to for a warning agent to be online again. */
const WARNING_MARGIN = 5;
/** Heartbeats in a row that must find every resource that far below before a warning ends. */
const WARNING_CALM_BEATS = 3;

export interface AgentMasterOptions {
  config: MasterTransportConfig;
  logger: Logger;
  tokens: JoinTokens;
  /** The runner version, sent to agents. */
  version: string;
  events?: Pick<EventBus, 'emit'>;
  /** Agents persist here when given (the master profile has a store). */
  store?: Store;
  /** Serves `state.*` of delegated tasks (state-proxy.ts). */
  state?: StateService;
  /** Where this master's REST API listens (for Describe); null while it does not, or when it has none. */
  httpAddress?: () => { host: string; port: number; tls?: boolean } | null;
}

/**
 * The master side of the agent transport: the gRPC server agents dial, their sessions, the
 * registry (AgentRegistry) and task delegation (AgentDelegator).
 */
export class AgentMaster {
  readonly registry: AgentRegistry;
  readonly delegator: AgentDelegator;
  readonly terminals: AgentTerminals;
  private readonly records = new Map<string, AgentRecord>();
  private readonly listeners = new Set<(agent: Agent) => void>();
  private readonly server: grpc.Server;
  private readonly store?: AgentStore;
  private readonly identities: AgentIdentities;
  private sweeper?: NodeJS.Timeout;
  private bound?: { host: string; port: number };
  private closing = false;

  constructor(private readonly options: AgentMasterOptions) {
    const { config } = options;
    // grpc-js writes its own errors to the console ("E No address added ..."); the errors that
    // matter reach this plugin and are reported in its words, so its lines go to the debug log.
    grpc.setLogger({ error: (...args: unknown[]) => options.logger.debug(`grpc: ${args.map(String).join(' ')}`) });
    this.server = new grpc.Server({
      'grpc.max_receive_message_length': config.maxMessageBytes,
      'grpc.max_send_message_length': config.maxMessageBytes,
      // Reaps connections whose peer vanished without a FIN (a host that lost power); the
      // heartbeat timeout marks the agent offline well before.
      'grpc.keepalive_time_ms': 60_000,
      'grpc.keepalive_timeout_ms': 20_000,
    });
    const proto = loadRunnerProto().runner.v1;
    this.server.addService(proto.Master.service, {
      Connect: (call: grpc.ServerDuplexStream<AgentMessage__Output, MasterMessage>) => this.onConnect(call),
      Describe: (
        _call: grpc.ServerUnaryCall<DescribeRequest__Output, DescribeResponse>,
        callback: grpc.sendUnaryData<DescribeResponse>,
      ) => {
        const http = options.httpAddress?.() ?? null;
        callback(null, {
          version: options.version,
          http_port: http?.port ?? 0,
          http_bind_address: http?.host ?? '',
          http_tls: http?.tls === true,
        });
      },
    });
    if (options.store) this.store = new AgentStore(options.store, options.logger, config.persistIntervalMs);
    this.identities = new AgentIdentities(options.logger, options.store);
    const state: MasterState = {
      records: this.records,
      listeners: this.listeners,
      config,
      logger: options.logger,
      events: options.events,
      store: this.store,
      identities: this.identities,
      view: (record) => this.view(record),
      changed: (record) => this.changed(record),
    };
    this.registry = createRegistry(state);
    this.delegator = createDelegator(state);
    this.terminals = createTerminals(state);
  }

  /** Keeps agent identities the same on every master sharing the store. */
  shareIdentities(cluster: Cluster): () => void {
    this.identities.onWrite((name, identity) => cluster.publish('agents.identity', { name, identity }));
    return cluster.subscribe<{ name: string; identity: Identity | null }>('agents.identity', ({ name, identity }) =>
      this.identities.learn(name, identity),
    );
  }

  /** Loads known agents (offline until they reconnect), then listens. */
  async listen(): Promise<{ host: string; port: number }> {
    for (const stored of (await this.store?.open()) ?? []) {
      this.records.set(stored.name, { ...stored, status: 'offline', error: '' });
    }
    await this.identities.open();
    const { config } = this.options;
    const credentials =
      config.tlsCert && config.tlsKey
        ? grpc.ServerCredentials.createSsl(
            null,
            [
              {
                cert_chain: readPem(config.tlsCert, `${config.tlsSection ?? 'grpc'}.tls_cert`),
                private_key: readPem(config.tlsKey, `${config.tlsSection ?? 'grpc'}.tls_key`),
              },
            ],
            false,
          )
        : grpc.ServerCredentials.createInsecure();
    const target = config.bindAddress.includes(':')
      ? `[${config.bindAddress}]:${config.port}`
      : `${config.bindAddress}:${config.port}`;
    const port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync(target, credentials, (error, bound) => (error ? reject(error) : resolve(bound))),
    ).catch((error: Error) => {
      const inUse = /EADDRINUSE|address already in use|No address added/i.test(error.message);
      throw new RunnerError(
        'listen_failed',
        `cannot listen for agents on ${target}: ${inUse ? 'address already in use (another master or program holds it; choose another with grpc.port or --port)' : error.message}`,
        { cause: error },
      );
    });
    this.bound = { host: config.bindAddress, port };
    // One sweep for every session: thousands of agents need no timer each.
    const sweepMs = Math.min(5000, Math.max(50, config.heartbeatTimeoutMs / 4));
    this.sweeper = setInterval(() => this.sweep(), sweepMs);
    this.sweeper.unref();
    return this.bound;
  }

  address(): { host: string; port: number } | undefined {
    return this.bound;
  }

  /** Ends every session (agents reconnect to the next master), stops listening, saves agents. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    clearInterval(this.sweeper);
    for (const record of this.records.values()) {
      record.session?.close('the master is stopping', {
        disconnect: { reason: 'the master is stopping', reconnect: true },
      });
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, 2000);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    await this.identities.close();
    await this.store?.close();
  }

  // ---- sessions ------------------------------------------------------------------------------

  private onConnect(call: grpc.ServerDuplexStream<AgentMessage__Output, MasterMessage>): void {
    const { config, logger } = this.options;
    const address = call.getPeer();
    const claimed = String(call.metadata.get('x-runner-agent')[0] ?? '');
    const who = `${claimed ? `agent ${claimed}` : 'an agent'} from ${address}`;
    const refuse = (code: grpc.status, why: string, level: 'warn' | 'info' = 'warn') => {
      logger[level](`refused ${who}: ${why}`, { agent: claimed || undefined, address });
      try {
        call.emit('error', { code, details: why });
      } catch {}
    };
    if (this.closing) return refuse(grpc.status.UNAVAILABLE, 'the master is stopping', 'info');

    const refuseAs = (refusal: Refusal) => refuse(grpc.status[refusal.refused], refusal.why);

    // The agent's own credential for the name it claims, else the join token (identities.ts).
    const header = String(call.metadata.get('authorization')[0] ?? '');
    const presented = /^Bearer\s+(.+)$/i.exec(header)?.[1]?.trim();
    const credential = String(call.metadata.get(CREDENTIAL_HEADER)[0] ?? '').trim() || undefined;
    const proof = this.identities.authenticate(claimed, credential, () => this.options.tokens.check(presented));
    if (isRefusal(proof)) return refuseAs(proof);

    let session: AgentSession | undefined;
    const registerTimer = setTimeout(
      () => refuse(grpc.status.DEADLINE_EXCEEDED, `no register message within ${formatMs(config.registerTimeoutMs)}`),
      config.registerTimeoutMs,
    );
    call.on('data', (message: AgentMessage__Output) => {
      if (session) {
        session.lastSeen = Date.now();
        if (message.body === 'heartbeat')
          this.onHeartbeat(session, message.call_id, message.heartbeat as HeartbeatRequest__Output);
        else if (message.body === 'state') serveState(session, message, this.options.state, this.options.logger);
        else session.deliver(message);
        return;
      }
      clearTimeout(registerTimer);
      if (message.body !== 'register' || !message.register) {
        return refuse(
          grpc.status.FAILED_PRECONDITION,
          `the first message must be register, got ${message.body ?? 'nothing'}`,
        );
      }
      const register = message.register;
      if (register.protocol_version !== PROTOCOL_VERSION) {
        return refuse(
          grpc.status.FAILED_PRECONDITION,
          `protocol version ${register.protocol_version} is not supported (this master speaks ${PROTOCOL_VERSION}); upgrade the agent or the master so they match`,
        );
      }
      if (!AGENT_NAME_PATTERN.test(register.name)) {
        return refuse(
          grpc.status.INVALID_ARGUMENT,
          `agent name ${JSON.stringify(register.name)} is not valid: use ${AGENT_NAME_RULE}`,
        );
      }
      if (claimed && register.name !== claimed) {
        return refuse(
          grpc.status.INVALID_ARGUMENT,
          `registers as ${JSON.stringify(register.name)} but connected as ${JSON.stringify(claimed)} (x-runner-agent)`,
        );
      }
      const admitted = this.identities.admit(register.name, proof, this.records.get(register.name)?.session?.address);
      if (isRefusal(admitted)) return refuseAs(admitted);
      session = this.register(register, address, call, proof, admitted.credential);
    });
    const ended = (why: string) => {
      clearTimeout(registerTimer);
      session?.close(why);
    };
    // A frozen agent (stopped, swapping, its host suspended) does not close anything: gRPC's
    // keepalive drops the connection after it stopped answering. Say that, not that it closed it.
    const why = (what: string) => {
      const silent = session ? Date.now() - session.lastSeen : 0;
      return silent > this.options.config.heartbeatIntervalMs * 1.5
        ? `the agent stopped answering (nothing from it for ${formatMs(silent)}), then its connection ended`
        : what;
    };
    call.on('end', () => ended(why('the agent closed the connection')));
    call.on('error', (error: Error) => ended(why(`the connection broke (${error.message})`)));
    call.on('cancelled', () => ended(why('the connection broke')));
    call.on('close', () => ended(why('the connection closed')));
  }

  private register(
    register: Register__Output,
    address: string,
    call: grpc.ServerDuplexStream<AgentMessage__Output, MasterMessage>,
    proof: Proof,
    credential: string | undefined,
  ): AgentSession {
    const { config, logger } = this.options;
    const name = register.name;
    const previous = this.records.get(name);
    if (previous?.session) {
      // Only the agent's own credential gets here (identities.admit refuses the join token for a
      // held name). The newer connection wins: after a network blip the old stream may be half
      // dead; an agent that restarted is the same agent. The old connection is told not to
      // reconnect, so two processes sharing one credential do not take turns forever.
      logger.warn(
        `agent ${name} connected again from ${address}; closing its previous connection from ${previous.session.address}`,
        { agent: name },
      );
      const replaced = previous.session;
      previous.session = undefined;
      replaced.close(`replaced by a new connection from ${address}`, {
        disconnect: {
          reason: `another connection of agent ${name} (from ${address}) replaced this one`,
          reconnect: false,
        },
      });
    }
    const now = new Date().toISOString();
    const session = new AgentSession(name, address, call, (s, reason) => this.onSessionClosed(s, reason));
    const record: AgentRecord = {
      name,
      address,
      last_heartbeat: now,
      cpu_usage: previous?.cpu_usage ?? 0,
      memory_usage: previous?.memory_usage ?? 0,
      disk_usage: previous?.disk_usage ?? 0,
      uptime: register.uptime,
      version: register.version,
      hostname: register.hostname,
      os: register.os,
      registered_at: previous?.registered_at ?? now,
      modules: [...register.modules].sort(),
      labels: { ...register.labels },
      status: 'online',
      error: '',
      session,
    };
    this.records.set(name, record);
    session.send({
      registered: {
        master_version: this.options.version,
        heartbeat_interval: config.heartbeatIntervalMs / 1000,
        heartbeat_timeout: config.heartbeatTimeoutMs / 1000,
        address,
        credential: credential ?? '',
      },
    });
    logger.info(
      `agent ${name} connected from ${address}${credential ? ' and was enrolled: issued its own credential' : proof === 'credential' ? ' with its credential' : ''}`,
      { agent: name, address, version: register.version },
    );
    this.store?.save(record);
    if (credential) this.options.events?.emit('agent.enrolled', { agent_name: name, address, status: 'online' });
    this.options.events?.emit('agent.connected', { agent_name: name, address, status: 'online' });
    this.changed(record);
    return session;
  }

  private onHeartbeat(session: AgentSession, callId: number, heartbeat: HeartbeatRequest__Output): void {
    const record = this.records.get(session.name);
    if (record?.session !== session) return;
    const usage = heartbeat.usage;
    const before = {
      cpu: record.cpu_usage,
      memory: record.memory_usage,
      disk: record.disk_usage,
      status: record.status,
    };
    record.last_heartbeat = new Date().toISOString();
    if (usage) {
      record.cpu_usage = round(usage.cpu_percent);
      record.memory_usage = round(usage.memory_percent);
      record.disk_usage = round(usage.disk_percent);
      record.uptime = usage.uptime;
    }
    record.error = heartbeat.error;
    const changed =
      record.cpu_usage !== before.cpu || record.memory_usage !== before.memory || record.disk_usage !== before.disk;
    const status = this.statusOf(record);
    if (status !== record.status) {
      const why =
        status === 'warning' ? this.overThreshold(record) : status === 'error' ? record.error : 'back to normal';
      this.options.logger[status === 'online' ? 'info' : 'warn'](`agent ${record.name} is ${status}: ${why}`, {
        agent: record.name,
        status,
      });
      record.status = status;
      this.options.events?.emit('agent.status_changed', {
        agent_name: record.name,
        address: record.address,
        status,
        previous_status: before.status,
        reason: why ?? '',
      });
    }
    session.send({ call_id: callId, heartbeat: { server_time_ms: Date.now() } });
    this.store?.touch(record);
    // Listeners (the WebSocket's agent_update) hear of status and usage changes, not of every beat.
    if (changed || status !== before.status) this.changed(record);
  }

  private onSessionClosed(session: AgentSession, reason: string): void {
    const record = this.records.get(session.name);
    // A replaced session's end says nothing about the agent, which is connected again.
    if (!record || record.session !== session) return;
    record.session = undefined;
    record.status = 'offline';
    this.options.logger.info(`agent ${record.name} disconnected: ${reason}`, {
      agent: record.name,
      address: record.address,
    });
    this.store?.save(record);
    this.options.events?.emit('agent.disconnected', {
      agent_name: record.name,
      address: record.address,
      status: 'offline',
    });
    this.changed(record);
  }

  /** Sessions silent for longer than the heartbeat timeout are given up. */
  private sweep(): void {
    const limit = Date.now() - this.options.config.heartbeatTimeoutMs;
    for (const record of this.records.values()) {
      const session = record.session;
      if (session && session.lastSeen < limit) {
        session.close(`no heartbeat for ${formatMs(Date.now() - session.lastSeen)}`, {
          status: { code: grpc.status.UNAVAILABLE },
        });
      }
    }
  }

  private statusOf(record: AgentRecord): AgentStatus {
    if (!record.session) return 'offline';
    if (record.error) return 'error';
    if (this.overThreshold(record)) {
      record.calmBeats = 0;
      return 'warning';
    }
    // A warning ends once every resource has been WARNING_MARGIN points below the threshold for
    // WARNING_CALM_BEATS heartbeats in a row: a CPU hovering at the threshold, or dipping under
    // it for a beat on a busy host, flipped the status again and again, each flip an
    // agent.status_changed event (stored, and run by hooks), a log line and an agent_update.
    if (record.status !== 'warning') return 'online';
    record.calmBeats = this.overThreshold(record, WARNING_MARGIN) ? 0 : (record.calmBeats ?? 0) + 1;
    return record.calmBeats >= WARNING_CALM_BEATS ? 'online' : 'warning';
  }

  /** The resources above the threshold (less `margin` points), as the warning says them. */
  private overThreshold(record: AgentRecord, margin = 0): string {
    const limit = this.options.config.warningThreshold;
    return [
      ['CPU', record.cpu_usage],
      ['memory', record.memory_usage],
      ['disk', record.disk_usage],
    ]
      .filter(([, value]) => (value as number) > limit - margin)
      .map(([what, value]) => `${what} at ${value}% (above ${limit}%)`)
      .join(', ');
  }

  private view(record: AgentRecord): Agent {
    return { ...toAgent(record), ...this.identities.summary(record.name) };
  }

  private changed(record: AgentRecord): void {
    if (this.listeners.size === 0) return;
    const agent = this.view(record);
    for (const listener of this.listeners) {
      try {
        listener(agent);
      } catch (error) {
        this.options.logger.error(`an agent change listener failed: ${(error as Error).message}`);
      }
    }
  }
}
