import type { KernelHooks } from '@runner/plugin-sdk';
import { HookError } from './errors.js';

type AnyFn = (...args: any[]) => any;

/**
 * The kernel's hooks as one plugin sees them: every tap is named after the plugin, and a tap that
 * throws (or rejects, or calls back with an error) fails with a HookError naming plugin and hook.
 */
export function labelledHooks(hooks: KernelHooks, pluginId: string): KernelHooks {
  const view: Record<string, unknown> = {};
  for (const [hookName, hook] of Object.entries(hooks)) {
    const fail = (error: unknown) => (error instanceof HookError ? error : new HookError(pluginId, hookName, error));
    const target = hook as unknown as Record<string, AnyFn>;
    const wrappers: Record<string, (options: unknown, fn: AnyFn) => void> = {
      tap: (options, fn) =>
        target.tap.call(hook, tapOptions(options, pluginId), (...args: unknown[]) => {
          try {
            return fn(...args);
          } catch (error) {
            throw fail(error);
          }
        }),
      tapPromise: (options, fn) =>
        target.tapPromise.call(hook, tapOptions(options, pluginId), async (...args: unknown[]) => {
          try {
            return await fn(...args);
          } catch (error) {
            throw fail(error);
          }
        }),
      tapAsync: (options, fn) =>
        target.tapAsync.call(hook, tapOptions(options, pluginId), (...args: unknown[]) => {
          const callback = args.pop() as AnyFn;
          try {
            fn(...args, (error: unknown, result: unknown) => (error ? callback(fail(error)) : callback(null, result)));
          } catch (error) {
            callback(fail(error));
          }
        }),
    };
    view[hookName] = new Proxy(hook, {
      get(hookTarget, property, receiver) {
        if (typeof property === 'string' && property in wrappers && typeof target[property] === 'function') {
          return wrappers[property];
        }
        const value = Reflect.get(hookTarget, property, receiver);
        return typeof value === 'function' ? value.bind(hookTarget) : value;
      },
    });
  }
  return Object.freeze(view) as unknown as KernelHooks;
}

function tapOptions(options: unknown, pluginId: string): string | Record<string, unknown> {
  // The tap's name is always the plugin's id; other options (stage, before) pass through.
  return typeof options === 'object' && options !== null ? { ...(options as object), name: pluginId } : pluginId;
}
