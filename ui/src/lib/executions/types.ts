import type { paths } from '$lib/api/schema';

/** Shapes of the executions API, from the generated OpenAPI types. */
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
export type ExecutionList = Json<paths['/api/v1/executions']['get']['responses'][200]>;
export type ExecutionSummary = ExecutionList['executions'][number];
export type Run = Json<paths['/api/v1/executions/{id}']['get']['responses'][200]>;
export type Task = NonNullable<Run['tasks']>[number];
export type RunStatus = Run['status'];
export type RunBody = NonNullable<paths['/api/v1/workflows/run']['post']['requestBody']>['content']['application/json'];

export const RUN_STATUSES: RunStatus[] = ['running', 'succeeded', 'failed', 'cancelled', 'interrupted'];

/** Time ranges of the list's filter, as `since` (ISO) computed at request time. */
export const RANGES = [
  { id: '', label: 'Any time', ms: 0 },
  { id: '1h', label: 'Last hour', ms: 3600_000 },
  { id: '24h', label: 'Last 24 hours', ms: 86400_000 },
  { id: '7d', label: 'Last 7 days', ms: 7 * 86400_000 },
  { id: '30d', label: 'Last 30 days', ms: 30 * 86400_000 },
] as const;
