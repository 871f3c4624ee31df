import { NotFoundError, RunnerError } from '@runner/plugin-sdk';

/**
 * The agent cannot be reached: not connected, or lost before it took the call. Failover moves on
 * to the next agent on this code (see the engine's delegation).
 */
export class AgentUnreachableError extends RunnerError {
  constructor(agent: string, why: string, options: { cause?: unknown } = {}) {
    super('agent_unreachable', `agent ${agent} is unreachable: ${why}`, {
      status: 503,
      details: { agent },
      ...options,
    });
  }
}

/**
 * The agent went away after it took a task. The task may have run in part, so it fails rather
 * than running again elsewhere (a retry policy on the task may still run it again).
 */
export class AgentLostError extends RunnerError {
  constructor(agent: string, why: string) {
    super('agent_lost', `agent ${agent} was lost while running the task: ${why}`, { status: 503, details: { agent } });
  }
}

/** The agent answered a call with a failure of its own. */
export class AgentCallError extends RunnerError {
  constructor(agent: string, code: string, message: string) {
    super(code || 'agent_error', `agent ${agent}: ${message}`, { status: 502, details: { agent } });
  }
}

export class AgentTimeoutError extends RunnerError {
  constructor(agent: string, what: string, ms: number) {
    super('agent_timeout', `agent ${agent} did not answer ${what} within ${formatMs(ms)}`, {
      status: 504,
      details: { agent },
    });
  }
}

export function unknownAgent(name: string): NotFoundError {
  return new NotFoundError(`no agent named "${name}"`, { details: { agent: name } });
}

export function formatMs(ms: number): string {
  return ms >= 1000 ? `${+(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}
