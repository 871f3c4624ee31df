/**
 * True for a value `await` would wait on (anything with a `then` function). Code on busy paths
 * awaits only such values: awaiting a plain value still costs a microtask turn and a promise.
 */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
