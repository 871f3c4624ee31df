import { api, data } from '$lib/api/client';
import type { paths } from '$lib/api/schema';

/** Shapes of the hooks and events APIs, from the generated OpenAPI types. */
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
export type Hook = Json<paths['/api/v1/hooks/{id}']['get']['responses'][200]>;
export type HookBody = NonNullable<paths['/api/v1/hooks']['post']['requestBody']>['content']['application/json'];
export type Execution = Json<paths['/api/v1/hooks/{id}/history']['get']['responses'][200]>['executions'][number];
export type TestResult = Json<paths['/api/v1/hooks/{id}/test']['post']['responses'][200]>;
export type QueuedEvent = Json<paths['/api/v1/events']['get']['responses'][200]>['events'][number];
export type EventDetail = Json<paths['/api/v1/events/{id}']['get']['responses'][200]>;

export type HookEvent = Json<paths['/api/v1/hook-events']['get']['responses'][200]>['events'][number];

let hookEventsRead: Promise<HookEvent[]> | undefined;

/**
 * The events and patterns a hook may name, with what each means, as the master lists them (the
 * events it emits; read once a tab). The hook form offers them; the events page filters by them.
 */
export function hookEvents(): Promise<HookEvent[]> {
  hookEventsRead ??= data(api.GET('/api/v1/hook-events')).then(
    (answer) => answer.events,
    (error: unknown) => {
      hookEventsRead = undefined;
      throw error;
    },
  );
  return hookEventsRead;
}

export const EVENT_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;

/** A success rate as the list shows it. */
export const rate = (value: number | null | undefined) => (value === null || value === undefined ? '–' : `${value}%`);

/** The line and column of a script that does not compile, from the master's error details. */
export function compileProblem(error: unknown): { message: string; line?: number; column?: number } | undefined {
  const e = error as { field?: string; message?: string; details?: { line?: unknown; column?: unknown } } | undefined;
  if (e?.field !== 'script' || typeof e.details?.line !== 'number') return undefined;
  return {
    message: e.message ?? '',
    line: e.details.line,
    column: typeof e.details.column === 'number' ? e.details.column : undefined,
  };
}
