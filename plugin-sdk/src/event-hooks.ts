import { createServiceRef } from './service-ref.js';

/**
 * A hook as another plugin declares it (GitOps' manifest): the fields of `POST /api/v1/hooks`.
 * Omitted fields take the hooks plugin's defaults (enabled, priority 100, timeout 30 s, no retries).
 */
export interface HookDeclaration {
  name: string;
  /** An event name, `flow.<name>`, `schedule.<name>`, a `family.*` pattern or `*`. */
  event_type: string;
  /** The Lua script it runs. */
  script: string;
  enabled?: boolean;
  priority?: number;
  /** Seconds. */
  timeout?: number;
  retries?: number;
  stack?: string | null;
}

/**
 * The hooks of the event-hooks plugin, for plugins that manage hooks of their own (GitOps). Errors
 * are the API's: an InvalidInputError whose `field` names the field at fault (`script` with the
 * line and column of a Lua syntax error in `details`).
 */
export interface HooksService {
  /** What `put` would do with the declaration, writing nothing (a diff before a sync). */
  compare(hook: HookDeclaration): 'created' | 'updated' | 'unchanged';
  /** Throws what `put` would refuse the declaration for, writing nothing (the script compiled). */
  check(hook: HookDeclaration): void;
  /** Creates the hook, or changes the one of that name; `unchanged` when every field was equal. */
  put(hook: HookDeclaration): Promise<'created' | 'updated' | 'unchanged'>;
  /** Deletes the hook and its history; false when there was none. */
  remove(name: string): Promise<boolean>;
}

export const HooksRef = createServiceRef<HooksService>({
  id: 'event-hooks',
  description: 'Lua hooks on events: create, change and delete them by name (event-hooks plugin)',
});
