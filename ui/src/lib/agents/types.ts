import type { components, paths } from '$lib/api/schema';

/** Shapes of the agents API, from the generated OpenAPI types. */
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
export type AgentList = Json<paths['/api/v1/agents']['get']['responses'][200]>;
export type Agent = AgentList['agents'][number];
export type AgentStatus = Agent['status'];
export type ExecResult = Json<paths['/api/v1/agents/{name}/exec']['post']['responses'][200]>;
export type ApiError = components['schemas']['Error'];

export const STATUS_FILTERS = ['all', 'online', 'offline', 'warning', 'error'] as const;
export type StatusFilter = (typeof STATUS_FILTERS)[number];

export type AgentGroupList = Json<paths['/api/v1/agent-groups']['get']['responses'][200]>;
export type AgentGroup = AgentGroupList['groups'][number];
