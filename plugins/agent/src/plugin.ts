import {
  definePlugin,
  killMarkedProcesses,
  LuaModulesRef,
  LuaRuntimeRef,
  ownerMark,
  OWNER_VARIABLE,
  StateForwarderRef,
} from '@runner/plugin-sdk';
import { agentStartCommand } from './commands.js';
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
    const killed = process.getuid ? killMarkedProcesses(process.getuid(), owner) : 0;
    if (killed) ctx.logger.warn(`ended ${killed} process(es) an earlier agent on ${ctx.config.dataDir} left running`);
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
    });
    ctx.provide(AgentProcessRef, service);
    // module-state forwards state.* of delegated tasks through the agent's stream to the master.
    ctx.provide(StateForwarderRef, service.stateCalls);
    // Connect once every plugin is set up: the module list sent at registration is complete then.
    ctx.lifecycle.ready.tapPromise('agent', async () => service.start());
    return { stop: () => service.stop() };
  },
});
