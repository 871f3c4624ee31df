import {
  confineResources,
  CONFINEMENT_VARIABLE,
  definePlugin,
  joinCgroup,
  killCgroup,
  killMarkedProcesses,
  ownerCgroup,
  LuaModulesRef,
  LuaRuntimeRef,
  ownerMark,
  OWNER_VARIABLE,
  readResourceSettings,
  StateForwarderRef,
  type Confinement,
  type Logger,
  type ResourceSettings,
} from '@runner/plugin-sdk';
import { SUPERVISOR_ENV, agentStartCommand } from './commands.js';
import { AGENT_CONFIG, readAgentConfig } from './config.js';
import { AgentProcessRef } from './process.js';

/**
 * The agent side of the agent transport (`runner agent start`): dials the master, registers,
 * heartbeats, runs delegated tasks with this host's Lua runtime and modules, and reconnects after
 * a loss. The master side is the `agent-transport` plugin.
 */
export const plugin = definePlugin({
  id: 'agent',
  version: '0.1.0',
  description:
    'Agent side of the agent transport: connects to the master, heartbeats, runs delegated tasks, reports metrics',
  profiles: ['agent'],
  provides: [AgentProcessRef, StateForwarderRef],
  dependsOn: { runtime: LuaRuntimeRef, modules: LuaModulesRef },
  commands: [agentStartCommand],
  config: AGENT_CONFIG,
  async setup(ctx, { runtime, modules }) {
    const config = readAgentConfig(ctx.config);
    if (config.cleartextWarning) ctx.logger.warn(config.cleartextWarning);
    // Commands an earlier agent on this data directory left running (it was killed, and its
    // tasks' commands outlived it) end before this one takes tasks. Every command this agent
    // starts inherits the mark from its environment.
    const owner = ownerMark(`agent:${ctx.config.dataDir}`);
    const resources = readResourceSettings(ctx.config);
    const confinement = confineTasks(owner, resources, ctx.logger);
    // Not under systemd, which keeps the unit's processes in its cgroup and ends them with it: as
    // root with cgroup2, the agent's own cgroup, which its tasks' commands inherit and cannot leave.
    const tracking = process.env.INVOCATION_ID ? undefined : ownerCgroup(owner);
    // Also those that cleared their environment (env -i), found in the cgroups; not the agent
    // process that started this one on a restart and waits for it (it shares the cgroup).
    const supervisor = process.env[SUPERVISOR_ENV] ? [Number(process.env[SUPERVISOR_ENV])] : [];
    const killed =
      (process.getuid ? killMarkedProcesses(process.getuid(), owner) : 0) +
      [tracking, confinement.cgroups[0]].reduce((sum, dir) => sum + (dir ? killCgroup(dir, supervisor) : 0), 0);
    if (killed) ctx.logger.warn(`ended ${killed} process(es) an earlier agent on ${ctx.config.dataDir} left running`);
    if (tracking && !joinCgroup(tracking, process.pid))
      ctx.logger.warn(
        `could not enter ${tracking}: commands that clear their environment escape the next start's sweep`,
      );
    process.env[OWNER_VARIABLE] = owner;
    // grpc-js and the proto load here, not at import: `runner --help` imports every plugin's entry.
    const { AgentService } = await import('./service.js');
    const service = new AgentService({
      config,
      runtime,
      modules,
      logger: ctx.logger,
      version: ctx.kernelVersion,
      redactor: ctx.redactor,
      resources,
      dataDir: ctx.config.dataDir,
    });
    ctx.provide(AgentProcessRef, service);
    // module-state forwards state.* of delegated tasks through the agent's stream to the master.
    ctx.provide(StateForwarderRef, service.stateCalls);
    // Connect once every plugin is set up: the module list sent at registration is complete then.
    ctx.lifecycle.ready.tapPromise('agent', async () => service.start());
    // The tasks' cgroups go with a clean stop (a killed agent's stay for the next one on this directory).
    return { stop: () => service.stop().finally(() => confinement.release()) };
  },
});

/**
 * resources.*: every command a delegated task starts joins the cgroup `runner-agent-<mark>` as
 * it starts, or takes its resource limits (the SDK's confinement, as the master's executor):
 * the agent process itself stays outside, so its heartbeats are not throttled nor it killed at
 * the tasks' memory limit. Says how each limit is held.
 */
function confineTasks(owner: string, resources: ResourceSettings, logger: Logger): Confinement {
  const confinement = confineResources(`runner-agent-${owner}`, resources);
  const setting = confinement.commandSetting(true);
  if (setting) process.env[CONFINEMENT_VARIABLE] = setting;
  logger.info(
    confinement.lines.length
      ? `task resources (${confinement.kind}): ${confinement.lines.join('; ')}`
      : 'task resources: no limits set (resources.cpu.limit, resources.memory.limit, resources.disk.limit)',
  );
  return confinement;
}
