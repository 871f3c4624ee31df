import { messageOf, RunnerError } from '@runner/plugin-sdk';

// One implementation, in the SDK; re-exported for the kernel's modules.
export { messageOf };

/**
 * Kernel failures. Every one names the plugin (and the lifecycle stage or phase) it is about, because an
 * operator reading "setup failed" with no name cannot act on it.
 */
export class KernelError extends RunnerError {
  readonly pluginId?: string;

  constructor(
    code: string,
    message: string,
    options: { pluginId?: string; cause?: unknown; details?: Record<string, unknown>; status?: number } = {},
  ) {
    super(code, message, { status: options.status ?? 500, cause: options.cause, details: options.details });
    this.pluginId = options.pluginId;
  }
}

/** The plugin graph cannot boot: cycle, duplicate id, missing service, incompatible kernel. */
export class PluginGraphError extends KernelError {}

/** A plugin's module could not be found or imported, or exports no plugin. */
export class PluginLoadError extends KernelError {}

/** A plugin's setup threw or did not finish in time. */
export class PluginSetupError extends KernelError {}

/** One or more plugins failed to stop; every plugin's stop was still awaited. */
export class PluginStopError extends KernelError {
  readonly failures: readonly { pluginId: string; phase: string; error: unknown }[];

  constructor(failures: readonly { pluginId: string; phase: string; error: unknown }[]) {
    super(
      'plugin_stop_failed',
      failures.map((f) => `plugin ${f.pluginId}: ${f.phase} failed: ${messageOf(f.error)}`).join('; '),
      { pluginId: failures[0]?.pluginId, cause: failures[0]?.error },
    );
    this.failures = failures;
  }
}

/** A tap on a kernel lifecycle stage threw. */
export class LifecycleTapError extends KernelError {
  readonly stage: string;

  constructor(pluginId: string, stage: string, cause: unknown) {
    super('lifecycle_tap_failed', `plugin ${pluginId}: lifecycle stage ${stage} failed: ${messageOf(cause)}`, {
      pluginId,
      cause,
    });
    this.stage = stage;
  }
}

/**
 * Runs `work` with a deadline. The timer keeps the process alive on purpose: work that never
 * settles and holds nothing open would otherwise let the process drain and exit with no word of
 * which plugin hung. It is cleared as soon as the work settles.
 */
export async function withTimeout<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
