/**
 * Sets a key as an own property. Keys come from user files, and a plain assignment of
 * `__proto__` would replace the object's prototype instead of adding an entry.
 */
export function setOwn<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
