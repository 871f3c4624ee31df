import type { Redactor } from '@runner/plugin-sdk';

/**
 * Passwords and API token secrets registered with the redactor once presented (a login, a token
 * on a request): the master stores only hashes, so it knows the value from its first use on,
 * also after a restart. Not when created or set: the one answer that shows a new token or a
 * generated password must show it. One registration per user or token; a changed password, a
 * revoked token or a removed user is forgotten.
 */
export class KnownSecrets {
  readonly #known = new Map<string, { value: string; forget(): void }>();

  constructor(private readonly redactor?: Pick<Redactor, 'addSecret'>) {}

  /** `key` names whose secret it is (`password:alice`, `token:ci`). */
  set(key: string, value: string): void {
    const known = this.#known.get(key);
    if (known?.value === value || !this.redactor) return;
    known?.forget();
    this.#known.set(key, { value, forget: this.redactor.addSecret(value) });
  }

  forget(key: string): void {
    this.#known.get(key)?.forget();
    this.#known.delete(key);
  }
}
