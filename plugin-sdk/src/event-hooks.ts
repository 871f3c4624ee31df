import { createServiceRef } from './service-ref.js';
import type { UnitOfWork } from './unit-of-work.js';

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
  /**
   * Rejects with what `put` would refuse the declaration for, writing nothing: the fields, the
   * script compiled, the event known, the stack existing (through the stacks service).
   */
  check(hook: HookDeclaration): Promise<void>;
  /**
   * Creates the hook, or changes the one of that name; `unchanged` when every field was equal.
   * Given a `unit` (UnitOfWork), it is written in the unit's transaction and runs from the unit's
   * commit on; inside a unit the stack is not checked (call `check` before the unit opens).
   */
  put(hook: HookDeclaration, unit?: UnitOfWork): Promise<'created' | 'updated' | 'unchanged'>;
  /** Deletes the hook and its history; false when there was none. Given a `unit`, in its transaction. */
  remove(name: string, unit?: UnitOfWork): Promise<boolean>;
}

export const HooksRef = createServiceRef<HooksService>({
  id: 'event-hooks',
  description: 'Lua hooks on events: create, change and delete them by name (event-hooks plugin)',
});
