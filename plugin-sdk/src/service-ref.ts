/**
 * A typed handle for a service. Plugins name services only through refs, never through bare
 * strings, so a dependency and its implementation agree on the type at compile time.
 */
export interface ServiceRef<T> {
  readonly kind: 'service-ref';
  /** Unique, dotted id such as `store` or `secrets.store`. */
  readonly id: string;
  /** One line shown in graph errors and `runner doctor`. */
  readonly description?: string;
  /** Phantom field that carries the type; never set at run time. */
  readonly __type?: T;
}

/** A dependency that may be absent: the plugin receives `undefined` instead of a boot failure. */
export interface OptionalServiceRef<T> {
  readonly kind: 'optional-service-ref';
  readonly ref: ServiceRef<T>;
}

/** Creates a service ref. Ids are compared by value, so two copies of a ref with one id match. */
export function createServiceRef<T>(options: { id: string; description?: string }): ServiceRef<T> {
  if (!/^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)*$/.test(options.id)) {
    throw new TypeError(`service ref id "${options.id}" must be dotted kebab-case, e.g. "secrets.store"`);
  }
  return Object.freeze({ kind: 'service-ref' as const, id: options.id, description: options.description });
}

/** Marks a dependency as optional. */
export function optional<T>(ref: ServiceRef<T>): OptionalServiceRef<T> {
  return Object.freeze({ kind: 'optional-service-ref' as const, ref });
}

/** What a plugin may list in `dependsOn`. */
export type DependencyMap = Record<string, ServiceRef<unknown> | OptionalServiceRef<unknown>>;

/** The typed object `setup` receives for a `dependsOn` map. */
export type ResolvedDependencies<D extends DependencyMap> = {
  [K in keyof D]: D[K] extends ServiceRef<infer T>
    ? T
    : D[K] extends OptionalServiceRef<infer T>
      ? T | undefined
      : never;
};

/** Splits a dependency entry into its ref and whether it is optional. */
export function dependencyTarget(dep: ServiceRef<unknown> | OptionalServiceRef<unknown>): {
  ref: ServiceRef<unknown>;
  optional: boolean;
} {
  return dep.kind === 'optional-service-ref' ? { ref: dep.ref, optional: true } : { ref: dep, optional: false };
}
