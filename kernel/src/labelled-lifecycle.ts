import type { KernelLifecycle } from '@runner/plugin-sdk';
import { LifecycleTapError } from './errors.js';

type AnyFn = (...args: any[]) => any;

/**
 * The kernel's lifecycle as one plugin sees it: every tap is named after the plugin, and a tap that
 * throws (or rejects, or calls back with an error) fails with a LifecycleTapError naming plugin and
 * stage.
 */
export function labelledLifecycle(lifecycle: KernelLifecycle, pluginId: string): KernelLifecycle {
  const view: Record<string, unknown> = {};
  for (const [stageName, stage] of Object.entries(lifecycle)) {
    const fail = (error: unknown) =>
      error instanceof LifecycleTapError ? error : new LifecycleTapError(pluginId, stageName, error);
    const target = stage as unknown as Record<string, AnyFn>;
    const wrappers: Record<string, (options: unknown, fn: AnyFn) => void> = {
      tap: (options, fn) =>
        target.tap.call(stage, tapOptions(options, pluginId), (...args: unknown[]) => {
          try {
            return fn(...args);
          } catch (error) {
            throw fail(error);
          }
        }),
      tapPromise: (options, fn) =>
        target.tapPromise.call(stage, tapOptions(options, pluginId), async (...args: unknown[]) => {
          try {
            return await fn(...args);
          } catch (error) {
            throw fail(error);
          }
        }),
      tapAsync: (options, fn) =>
        target.tapAsync.call(stage, tapOptions(options, pluginId), (...args: unknown[]) => {
          const callback = args.pop() as AnyFn;
          try {
            fn(...args, (error: unknown, result: unknown) => (error ? callback(fail(error)) : callback(null, result)));
          } catch (error) {
            callback(fail(error));
          }
        }),
    };
    view[stageName] = new Proxy(stage, {
      get(stageTarget, property, receiver) {
        if (typeof property === 'string' && property in wrappers && typeof target[property] === 'function') {
          return wrappers[property];
        }
        const value = Reflect.get(stageTarget, property, receiver);
        return typeof value === 'function' ? value.bind(stageTarget) : value;
      },
    });
  }
  return Object.freeze(view) as unknown as KernelLifecycle;
}

function tapOptions(options: unknown, pluginId: string): string | Record<string, unknown> {
  // The tap's name is always the plugin's id; other options (stage, before) pass through.
  return typeof options === 'object' && options !== null ? { ...(options as object), name: pluginId } : pluginId;
}
