// The REST routes this plugin serves, declared without handlers: the build writes the OpenAPI
// document and the UI client from them, the CLI builds commands from them (see RouteDeclaration).
import { Permissions, declareRoute } from '@runner/plugin-sdk';
import {
  AgentListQuery,
  AgentListSchema,
  AgentSchema,
  AgentMetricsSchema,
  ProcessesSchema,
  NetworkSchema,
  DisksSchema,
  ExecBody,
  ExecResultSchema,
  InstallBody,
  AgentActionSchema,
  AgentParams,
} from './schemas.js';

const agentRoute = { params: AgentParams, tags: ['agents'] };

export const getAgents = declareRoute({
  method: 'GET',
  path: '/agents',
  summary: 'list agents with filters and paging',
  tags: ['agents'],
  permission: Permissions.agentView,
  query: AgentListQuery,
  responses: { 200: AgentListSchema },
});

export const getAgentsName = declareRoute({
  ...agentRoute,
  method: 'GET',
  path: '/agents/:name',
  summary: 'one agent',
  permission: Permissions.agentView,
  responses: { 200: AgentSchema },
});

export const deleteAgentsName = declareRoute({
  ...agentRoute,
  method: 'DELETE',
  path: '/agents/:name',
  summary: 'forget an agent and its credential (a revoked one too): the join token can enrol the name again',
  permission: Permissions.agentManage,
  responses: { 204: { description: 'removed' } },
});

export const postAgentsNameRevoke = declareRoute({
  ...agentRoute,
  method: 'POST',
  path: '/agents/:name/revoke',
  summary:
    "revoke an agent's credential: its session closes and it cannot reconnect; DELETE /agents/:name frees the name for enrolment",
  permission: Permissions.agentManage,
  responses: { 200: AgentSchema },
});

export const getAgentsNameMetrics = declareRoute({
  ...agentRoute,
  method: 'GET',
  path: '/agents/:name/metrics',
  summary: "an agent's CPU, memory, disk and network metrics",
  permission: Permissions.agentView,
  responses: { 200: AgentMetricsSchema },
});

export const getAgentsNameProcesses = declareRoute({
  ...agentRoute,
  method: 'GET',
  path: '/agents/:name/processes',
  summary: "an agent's processes",
  permission: Permissions.agentView,
  responses: { 200: ProcessesSchema },
});

export const getAgentsNameNetwork = declareRoute({
  ...agentRoute,
  method: 'GET',
  path: '/agents/:name/network',
  summary: "an agent's network interfaces",
  permission: Permissions.agentView,
  responses: { 200: NetworkSchema },
});

export const getAgentsNameDisk = declareRoute({
  ...agentRoute,
  method: 'GET',
  path: '/agents/:name/disk',
  summary: "an agent's disks",
  permission: Permissions.agentView,
  responses: { 200: DisksSchema },
});

export const getAgentsNameLogsStream = declareRoute({
  ...agentRoute,
  method: 'GET',
  path: '/agents/:name/logs/stream',
  summary: "an agent's log as server-sent events (live)",
  permission: Permissions.logsView,
  streaming: true,
  responses: { 200: { description: 'one `data:` line per log entry', contentType: 'text/event-stream' } },
});

export const postAgentsNameExec = declareRoute({
  ...agentRoute,
  method: 'POST',
  path: '/agents/:name/exec',
  summary: 'run a command on an agent and answer with its output and exit code',
  permission: Permissions.agentExec,
  body: ExecBody,
  responses: { 200: ExecResultSchema },
});

export const postAgentsNameRestart = declareRoute({
  ...agentRoute,
  method: 'POST',
  path: '/agents/:name/restart',
  summary: 'ask an agent to restart',
  permission: Permissions.agentRestart,
  responses: { 202: AgentActionSchema },
});

export const postAgentsNameStop = declareRoute({
  ...agentRoute,
  method: 'POST',
  path: '/agents/:name/stop',
  summary: 'ask an agent to stop',
  permission: Permissions.agentStop,
  responses: { 202: AgentActionSchema },
});

export const postAgentsNameInstall = declareRoute({
  ...agentRoute,
  method: 'POST',
  path: '/agents/:name/install',
  summary: 'install or update an agent on a host through an SSH profile: the master connects, streaming its progress',
  description:
    "What `runner agent install <name> --ssh-profile <profile>` calls: the master connects with the profile's credentials and pinned host key (they never leave it), checks the host, uploads its own runner, writes the agent's files and starts it. Refused before the stream begins (404 no such profile, 403 a host key not pinned or changed, 502 unreachable); then `line` events `{level: info|warning, text}`, and last `done` `{host, dir, service, master, pid, master_reach, log}` or `failed` `{code, message, status}`. Each connection, command and close is in the profile's audit log (actor `agent-install:<agent>/<user>`).",
  permission: Permissions.agentInstall,
  streaming: true,
  body: InstallBody,
  responses: {
    200: { description: '`line` events, then `done` or `failed`', contentType: 'text/event-stream' },
  },
});

/** Every route above, for the plugin's definition. */
export const routes = [
  getAgents,
  getAgentsName,
  deleteAgentsName,
  postAgentsNameRevoke,
  getAgentsNameMetrics,
  getAgentsNameProcesses,
  getAgentsNameNetwork,
  getAgentsNameDisk,
  getAgentsNameLogsStream,
  postAgentsNameExec,
  postAgentsNameRestart,
  postAgentsNameStop,
  postAgentsNameInstall,
];
