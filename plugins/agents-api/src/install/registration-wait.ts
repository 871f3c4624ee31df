// After an install: waits until the master lists the agent, through the master client.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  callRoute,
  createMasterClient,
  findMaster,
  RunnerError,
  isRunnerError,
  type CommandContext,
} from '@runner/plugin-sdk';
import { getAgentsName } from '../api.js';
import type { Deployed, Progress } from './deploy.js';
import type { Plan } from './install-plan.js';

/**
 * Polls the master's `GET /agents/<name>` until the agent is up there with a process younger than
 * `startedAt` (when this command began: an update's old process may still show), or `--wait` runs
 * out. With no master REST API known to this CLI, says what was not checked.
 */
export async function waitForRegistration(
  ctx: CommandContext,
  plan: Plan,
  deployed: Deployed,
  startedAt: number,
  { say, warn }: Progress,
): Promise<number> {
  const { name } = plan;
  const lookup = await findMaster(ctx, plan.masterUrl);
  if (!lookup.endpoint) {
    warn(
      `not checked: whether agent ${name} registered with the master, because no master REST API is known here ` +
        `(${lookup.lookedAt.join('; ')}). Check later with \`runner agent get ${name} --master-url http://<master>:8080\``,
    );
    return 0;
  }
  const endpoint = lookup.endpoint;
  const client = createMasterClient(endpoint, { dataDir: ctx.config.dataDir });
  say(`waiting up to ${plan.waitSeconds} s for ${name} to register with the master at ${endpoint.base} ...`);
  const deadline = Date.now() + plan.waitSeconds * 1000;
  let last = 'not registered yet';
  while (Date.now() < deadline) {
    try {
      const agent = await callRoute(client, getAgentsName, { params: { name }, timeoutMs: 5000 });
      const sinceStart = (Date.now() - startedAt) / 1000;
      if (agent.status === 'offline') last = `known to the master but offline (last heartbeat ${agent.last_heartbeat})`;
      else if (agent.uptime > sinceStart + 5)
        last = `registered, but still the process from before (up ${agent.uptime} s)`;
      else {
        say(
          `agent ${name} registered with the master: status ${agent.status}, address ${agent.address}, version ${agent.version}`,
        );
        return 0;
      }
    } catch (error) {
      if (!(isRunnerError(error) && error.status === 404))
        last = error instanceof Error ? error.message : String(error);
      else last = 'not registered yet (404)';
    }
    await sleep(Math.min(1000, Math.max(0, deadline - Date.now())));
  }
  const { host, master, master_reach: reach, log } = deployed;
  throw new RunnerError(
    'agent_not_registered',
    `agent ${name} is running on ${host} but did not register with the master at ${endpoint.base} within ${plan.waitSeconds} s: ${last}. ` +
      `${reach === 'ok' ? `${host} does reach ${master}` : `${host} cannot reach ${master} (${reach})`}; ` +
      `its log: ${log} on ${host}`,
    { status: 504 },
  );
}
