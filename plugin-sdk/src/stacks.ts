import { InvalidInputError, NotFoundError } from './errors.js';
import { createServiceRef } from './service-ref.js';

/** A stack's environment type (service.md, "Stack (environment)"). */
export type StackEnvironment = 'production' | 'staging' | 'development';
export const STACK_ENVIRONMENTS: readonly StackEnvironment[] = Object.freeze(['production', 'staging', 'development']);

/** A stack (environment): what runs naming it read (`stack.vars.<key>`, `secrets.<name>`). */
export interface Stack {
  name: string;
  description: string;
  environment: StackEnvironment;
  /** An inactive stack refuses runs naming it. */
  active: boolean;
  variables: Record<string, string>;
  /** ISO 8601 UTC. */
  created_at: string;
  updated_at: string;
}

/** The stacks (stacks plugin): read from memory, so a lookup costs no store read. */
export interface Stacks {
  get(name: string): Stack | undefined;
  names(): string[];
  /**
   * Resolves when stack `name` exists (read from the store first when it is not in memory: another
   * master may have made it a moment ago); rejects with a NotFoundError naming the stacks there are.
   * For plugins that keep a stack's name (secrets, hooks) and must refuse one that is no stack.
   */
  check(name: string): Promise<void>;
}

export const StacksRef = createServiceRef<Stacks>({
  id: 'stacks',
  description: 'stacks (environments) with their variables; runs name one (stacks plugin)',
});

/**
 * Refuses a request body's `stack` field that names no stack, as a 400 naming the field (a typo
 * would make a hook that never fires or a job whose every run is refused). A 404 would say the
 * resource asked for is missing, which it is not. Without the stacks plugin (`stacks` undefined)
 * any name is kept; null is no stack.
 */
export async function checkStackField(stacks: Pick<Stacks, 'check'> | undefined, stack: string | null): Promise<void> {
  if (stack === null || !stacks) return;
  try {
    await stacks.check(stack);
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    throw new InvalidInputError(`stack: ${error.message}`, { field: 'stack' });
  }
}
