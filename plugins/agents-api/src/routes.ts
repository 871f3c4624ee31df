import {
  NotFoundError,
  RunnerError,
  STREAMED,
  reply,
  type Agent,
  type AgentRegistry,
  type HttpRequest,
  type HttpRouter,
  type Logger,
} from '@runner/plugin-sdk';
import { streamAgentLogs, type LogStreamOptions } from './log-stream.js';
import type { MetricsCache } from './metrics-cache.js';
import { listAgents, parseExecBody, parseListQuery } from './requests.js';

export interface AgentRoutesOptions {
  /** Undefined when no agent transport is loaded: every route then answers 503. */
  registry: AgentRegistry | undefined;
  cache: MetricsCache;
  logger: Logger;
  /** Aborted when the kernel begins to stop; ends open log streams. */
  signal: AbortSignal;
  logStream: LogStreamOptions;
}

/** The agents' REST API (service.md section 4), under `/api/v1`. */
export function registerAgentRoutes(router: HttpRouter, options: AgentRoutesOptions): void {
  const { cache, logger } = options;
  const registry = (): AgentRegistry => {
    if (options.registry) return options.registry;
    throw new RunnerError(
      'agents_unavailable',
      'no agent transport is loaded in this master (the agent-transport plugin provides the agents registry)',
      { status: 503 },
    );
  };
  /** The agent named by the path, or 404. */
  const agentOf = (request: HttpRequest): Agent => {
    const name = request.params.name;
    const agent = registry().get(name);
    if (!agent) throw new NotFoundError(`agent "${name}" does not exist`, { details: { agent: name } });
    return agent;
  };

  router.route('GET', '/agents', ({ query }) => {
    const parsed = parseListQuery(query);
    return { ...listAgents(registry().list(), parsed), limit: parsed.limit, offset: parsed.offset };
  });

  router.route('GET', '/agents/:name', (request) => agentOf(request));

  router.route('DELETE', '/agents/:name', async (request) => {
    const { name } = agentOf(request);
    await registry().remove(name);
    cache.forget(name);
    logger.info('agent removed', { agent: name });
    return undefined;
  });

  router.route('GET', '/agents/:name/metrics', (request) => {
    const { name } = agentOf(request);
    return cache.get(name, 'metrics', () => registry().metrics(name));
  });
  router.route('GET', '/agents/:name/processes', async (request) => {
    const { name } = agentOf(request);
    return { processes: await cache.get(name, 'processes', () => registry().processes(name)) };
  });
  router.route('GET', '/agents/:name/network', async (request) => {
    const { name } = agentOf(request);
    return { interfaces: await cache.get(name, 'network', () => registry().network(name)) };
  });
  router.route('GET', '/agents/:name/disk', async (request) => {
    const { name } = agentOf(request);
    return { disks: await cache.get(name, 'disk', () => registry().disks(name)) };
  });

  router.route('GET', '/agents/:name/logs/stream', (request) => {
    const agent = agentOf(request);
    // Refused before the 200 goes out: once the stream has begun, a status can no longer be sent.
    if (agent.status === 'offline') throw offline(agent);
    streamAgentLogs(registry(), agent.name, request.raw.res, options.signal, options.logStream, logger);
    return STREAMED;
  });

  router.route('POST', '/agents/:name/exec', async (request) => {
    const exec = parseExecBody(request.body);
    const { name } = agentOf(request);
    const result = await registry().exec(name, exec.command, { timeoutMs: exec.timeoutMs, cwd: exec.cwd });
    logger.info('command executed on agent', {
      agent: name,
      exit_code: result.exit_code,
      timed_out: result.timed_out,
      duration: result.duration,
      remote: request.remoteAddress,
    });
    return result;
  });

  router.route('POST', '/agents/:name/restart', async (request) => {
    const { name } = agentOf(request);
    await registry().restart(name);
    cache.forget(name);
    logger.info('agent asked to restart', { agent: name, remote: request.remoteAddress });
    return reply(202, { name, action: 'restart', message: `agent ${name} is restarting; it registers again when up` });
  });

  router.route('POST', '/agents/:name/stop', async (request) => {
    const { name } = agentOf(request);
    await registry().stop(name);
    cache.forget(name);
    logger.info('agent asked to stop', { agent: name, remote: request.remoteAddress });
    return reply(202, { name, action: 'stop', message: `agent ${name} is stopping` });
  });
}

function offline(agent: Agent): RunnerError {
  return new RunnerError(
    'agent_unreachable',
    `agent "${agent.name}" is offline (last heartbeat ${agent.last_heartbeat || 'never'})`,
    { status: 503, details: { agent: agent.name } },
  );
}
