import { NotFoundError, type ServiceRef } from '@runner/plugin-sdk';
import { KernelError } from './errors.js';

/** Typed services by ref id, each remembering which plugin provided it. */
export class ServiceRegistry {
  private readonly services = new Map<string, { implementation: unknown; provider: string }>();

  provide<T>(ref: ServiceRef<T>, implementation: T, provider: string): void {
    const existing = this.services.get(ref.id);
    if (existing) {
      throw new KernelError(
        'service_duplicate',
        `plugin ${provider}: service "${ref.id}" is already provided by plugin ${existing.provider}`,
        {
          pluginId: provider,
        },
      );
    }
    if (implementation === undefined || implementation === null) {
      throw new KernelError(
        'service_invalid',
        `plugin ${provider}: provided no implementation for service "${ref.id}"`,
        { pluginId: provider },
      );
    }
    this.services.set(ref.id, { implementation, provider });
  }

  has(id: string): boolean {
    return this.services.has(id);
  }

  find<T>(ref: ServiceRef<T>): T | undefined {
    return this.services.get(ref.id)?.implementation as T | undefined;
  }

  get<T>(ref: ServiceRef<T>): T {
    const entry = this.services.get(ref.id);
    if (!entry) throw new NotFoundError(`service "${ref.id}" is not provided by any plugin of this profile`);
    return entry.implementation as T;
  }
}
