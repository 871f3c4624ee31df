import * as api from './api.js';
import {
  serve,
  NotFoundError,
  noteForAudit,
  RunnerError,
  STREAMED,
  reply,
  type Agent,
  type AgentGroups,
  type AgentRegistry,
  type HttpRouter,
  type Logger,
} from '@runner/plugin-sdk';
import { streamAgentLogs, type LogStreamOptions } from './log-stream.js';
import type { MetricsCache } from './metrics-cache.js';
import { groupMembers, listAgents, parseExecBody, parseListQuery } from './requests.js';

export interface AgentRoutesOptions {
  /** Undefined when no agent transport is loaded: every route then answers 503. */
  registry: AgentRegistry | undefined;
  /** Undefined without the agent-groups plugin: `?group=` then answers 400. */
  groups?: AgentGroups;
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
  const agentOf = (name: string): Agent => {
    const agent = registry().get(name);
    if (!agent) throw new NotFoundError(`agent "${name}" does not exist`, { details: { agent: name } });
    return agent;
  };

  router.add(
    serve(api.getAgents, ({ query }) => {
      const parsed = parseListQuery(query);
      if (parsed.group !== undefined) parsed.members = new Set(groupMembers(options.groups, parsed.group));
      return { ...listAgents(registry().list(), parsed), limit: parsed.limit, offset: parsed.offset };
    }),
  );

  router.add(serve(api.getAgentsName, (request) => agentOf(request.params.name)));

  router.add(
    serve(api.deleteAgentsName, async (request) => {
      const { name } = agentOf(request.params.name);
      await registry().remove(name);
      cache.forget(name);
      logger.info('agent removed', { agent: name });
      return undefined;
    }),
  );

  router.add(
    serve(api.postAgentsNameRevoke, async (request) => {
      const { name } = agentOf(request.params.name);
      const agent = await registry().revoke(name);
      cache.forget(name);
      logger.warn('agent credential revoked', { agent: name, remote: request.remoteAddress });
      return agent;
    }),
  );

  router.add(
    serve(api.getAgentsNameMetrics, (request) => {
      const { name } = agentOf(request.params.name);
      return cache.get(name, 'metrics', () => registry().metrics(name));
    }),
  );
  router.add(
    serve(api.getAgentsNameProcesses, async (request) => {
      const { name } = agentOf(request.params.name);
      return { processes: await cache.get(name, 'processes', () => registry().processes(name)) };
    }),
  );
  router.add(
    serve(api.getAgentsNameNetwork, async (request) => {
      const { name } = agentOf(request.params.name);
      return { interfaces: await cache.get(name, 'network', () => registry().network(name)) };
    }),
  );
  router.add(
    serve(api.getAgentsNameDisk, async (request) => {
      const { name } = agentOf(request.params.name);
      return { disks: await cache.get(name, 'disk', () => registry().disks(name)) };
    }),
  );

  router.add(
    serve(api.getAgentsNameLogsStream, (request) => {
      const agent = agentOf(request.params.name);
      // Refused before the 200 goes out: once the stream has begun, a status can no longer be sent.
      if (agent.status === 'offline') throw offline(agent);
      streamAgentLogs(registry(), agent.name, request.raw.res, options.signal, options.logStream, logger);
      return STREAMED;
    }),
  );

  router.add(
    serve(api.postAgentsNameExec, async (request) => {
      const exec = parseExecBody(request.body);
      const { name } = agentOf(request.params.name);
      // Noted before it runs: a command that never answers is still in its audit record.
      noteForAudit(request, `on ${name}: ${commandText(exec.command)}`);
      const result = await registry().exec(name, exec.command, { timeoutMs: exec.timeoutMs, cwd: exec.cwd });
      logger.info('command executed on agent', {
        agent: name,
        exit_code: result.exit_code,
        timed_out: result.timed_out,
        duration: result.duration,
        remote: request.remoteAddress,
      });
      return result;
    }),
  );

  router.add(
    serve(api.postAgentsNameRestart, async (request) => {
      const { name } = agentOf(request.params.name);
      await registry().restart(name);
      cache.forget(name);
      logger.info('agent asked to restart', { agent: name, remote: request.remoteAddress });
      return reply(202, {
        name,
        action: 'restart',
        message: `agent ${name} is restarting; it registers again when up`,
      });
    }),
  );

  router.add(
    serve(api.postAgentsNameStop, async (request) => {
      const { name } = agentOf(request.params.name);
      await registry().stop(name);
      cache.forget(name);
      logger.info('agent asked to stop', { agent: name, remote: request.remoteAddress });
      return reply(202, { name, action: 'stop', message: `agent ${name} is stopping` });
    }),
  );
}

/** An exec's command as one line for the audit record (a list is shown as its words). */
function commandText(command: string | string[]): string {
  return Array.isArray(command) ? command.map((word) => JSON.stringify(word)).join(' ') : command;
}

function offline(agent: Agent): RunnerError {
  return new RunnerError(
    'agent_unreachable',
    `agent "${agent.name}" is offline (last heartbeat ${agent.last_heartbeat || 'never'})`,
    { status: 503, details: { agent: agent.name } },
  );
}
