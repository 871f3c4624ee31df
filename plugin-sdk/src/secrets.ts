import { createServiceRef } from './service-ref.js';

/**
 * Encrypted values kept by the secrets plugin (issue 22). Values are sealed with AES-256-GCM under a
 * key kept apart from the store; only `reveal` ever returns plaintext, and only to master code that
 * needs it for a run, an SSH connection or a notification (never to an API answer).
 *
 * A scope groups values: a stack's name for the secrets scripts read (`secrets.<name>`), or an
 * owner's reserved scope such as `ssh-profile:<name>` for another plugin's credentials (the SSH
 * profiles' passwords and keys). `rotate-key` re-encrypts every scope, so a plugin that keeps a
 * credential stores it here rather than sealing it itself.
 */
export interface SecretsService {
  /** Stores (or replaces) a value; `actor` is recorded as its last updater. */
  put(scope: string, name: string, value: string, actor?: string): Promise<void>;
  /** The plaintext. Throws an error naming the scope and the name when there is no such value. */
  reveal(scope: string, name: string): Promise<string>;
  /** Every value of a scope, decrypted, for a run of that stack (each is registered with the redactor by the caller). */
  revealAll(scope: string): Promise<Record<string, string>>;
  /** False when there was no such value. */
  remove(scope: string, name: string): Promise<boolean>;
  /** Names and last update times only (ISO 8601 UTC). */
  list(scope: string): Promise<Array<{ name: string; updated_at: string }>>;
  /**
   * Has `check` vet the stack the API names (`GET` and `PUT /secrets/:stack/...`, so the CLI
   * too) before anything is read or stored: it throws, a NotFoundError naming the stacks there
   * are, for a name that is no stack, so that a typo (`prdo`) does not store a value no run
   * reads. The stacks plugin registers it; without one, any stack name is taken. Scopes other
   * plugins own (`ssh-profile:<name>`) never reach it. A later call replaces the check.
   */
  checkStacksWith(check: (stack: string) => Promise<void>): void;
}

export const SecretsRef = createServiceRef<SecretsService>({
  id: 'secrets',
  description: 'encrypted values per scope (stack secrets, SSH credentials); plaintext only to master code',
});
