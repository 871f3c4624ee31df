import type { Agent, AgentRegistry, WebSocketHub } from '@runner/plugin-sdk';

type Update = { name: string; status: string; cpu_usage: number; memory_usage: number };

/**
 * Broadcasts `agent_update` (service.md section 6) for every change the registry reports. The
 * registry reports status and metrics changes; an update identical to the last one sent for that
 * agent (a heartbeat that changed nothing the message carries) is not repeated.
 */
export function broadcastAgentUpdates(
  registry: AgentRegistry,
  hub: WebSocketHub,
  onAgentChange: (agent: Agent) => void = () => {},
): () => void {
  const lastSent = new Map<string, string>();
  return registry.onChange((agent) => {
    onAgentChange(agent);
    const update: Update = {
      name: agent.name,
      status: agent.status,
      cpu_usage: agent.cpu_usage,
      memory_usage: agent.memory_usage,
    };
    const key = JSON.stringify(update);
    if (lastSent.get(agent.name) === key) return;
    lastSent.set(agent.name, key);
    hub.broadcast('agent_update', update);
  });
}
