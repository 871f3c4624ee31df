/**
 * Helpers for testing a plugin without the real kernel: set it up against mock services, then
 * assert on the services it provides, the events it emitted and the lines it logged.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunnerConfig } from './src/config.js';
import { resolveConfig, type ConfigEntry } from './src/config-resolve.js';
import { CORE_CONFIG } from './src/core-config.js';
import { EventHub } from './src/event-bus.js';
import type { BusEvent, EventBus } from './src/events.js';
import { orderPlugins } from './src/plugin-order.js';
import { createKernelLifecycle, type KernelLifecycle, type PluginDescriptor } from './src/lifecycle.js';
import type { LogFields, Logger } from './src/logger.js';
import {
  LuaModulesRef,
  type LuaCallContext,
  type LuaFunctionRef,
  type LuaModules,
  type LuaModuleSpec,
  type LuaValue,
} from './src/lua-module.js';
import { definePlugin, type Plugin, type PluginInstance, type Profile } from './src/plugin.js';
import { createRedactor, RedactorRef } from './src/redactor.js';
import { dependencyTarget, type ServiceRef } from './src/service-ref.js';

export interface TestKernelOptions {
  plugins: readonly Plugin[];
  /** Mock implementations, keyed by the ref they stand for. */
  services?: readonly (readonly [ServiceRef<any>, unknown])[];
  /**
   * Config values keyed as in config.yaml (dotted keys or nested objects), checked against the
   * plugins' declarations as the kernel checks them (plus `configPlugins`' declarations).
   */
  config?: Record<string, unknown>;
  /** Plugins whose config declarations apply without setting them up (keys a plugin reads but another declares). */
  configPlugins?: readonly Plugin[];
  /** Defaults to a new temporary directory. */
  dataDir?: string;
  profile?: Profile;
}

export interface LoggedLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields: LogFields;
}

export interface TestKernel {
  get<T>(ref: ServiceRef<T>): T;
  readonly events: EventBus;
  readonly lifecycle: KernelLifecycle;
  readonly config: RunnerConfig;
  /** Every event emitted so far. */
  readonly emitted: BusEvent[];
  /** Every line logged so far, by any plugin. */
  readonly logs: LoggedLine[];
  /** Runs `ready` taps, as the real kernel does after setup. */
  ready(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A config over fixed values, checked and coerced exactly as the kernel checks its sources (the
 * same resolveConfig), against the SDK's own keys and the declarations of `plugins`.
 */
export function staticConfig(
  values: Record<string, unknown>,
  dataDir: string,
  plugins: readonly Pick<Plugin, 'id' | 'config'>[] = [],
  debug = false,
): RunnerConfig {
  const entries = new Map<string, ConfigEntry>();
  const walk = (prefix: string, value: unknown): void => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) walk(prefix ? `${prefix}.${k}` : k, v);
    } else if (prefix) entries.set(prefix, { value, source: 'test' });
  };
  walk('', values);
  if (debug) entries.set('debug', { value: true, source: 'test' });
  return resolveConfig({
    dataDir,
    entries,
    declarers: [
      { pluginId: 'kernel', config: CORE_CONFIG },
      ...plugins.map((p) => ({ pluginId: p.id, config: p.config })),
    ],
  });
}

function recordingLogger(lines: LoggedLine[], bound: LogFields): Logger {
  const at =
    (level: LoggedLine['level']) =>
    (message: string, fields?: LogFields): void => {
      lines.push({ level, message, fields: { ...bound, ...fields } });
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (fields) => recordingLogger(lines, { ...bound, ...fields }),
  };
}

/**
 * Sets the plugins up against the mocks and each other's services, in dependency order (the
 * kernel's own orderPlugins, services given as mocks counting as provided).
 */
export async function createTestKernel(options: TestKernelOptions): Promise<TestKernel> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'runner-test-'));
  const config = staticConfig(options.config ?? {}, dataDir, [...options.plugins, ...(options.configPlugins ?? [])]);
  const emitted: BusEvent[] = [];
  const logs: LoggedLine[] = [];
  const redactor = createRedactor();
  // The kernel's own bus (ids, redaction, isolation of failing subscribers), recording each event.
  const hub = new EventHub({
    logger: recordingLogger(logs, { plugin: 'kernel' }),
    redactor,
    onEmit: (event) => emitted.push(event),
  });
  const events = hub.forPlugin('test');
  const lifecycle = createKernelLifecycle();
  const services = new Map<string, unknown>();
  services.set(RedactorRef.id, redactor);
  for (const [ref, impl] of options.services ?? []) services.set(ref.id, impl);
  const stops: (() => Promise<void> | void)[] = [];
  const controller = new AbortController();
  const descriptors: PluginDescriptor[] = options.plugins.map((p) => ({
    id: p.id,
    version: p.version,
    description: p.description,
    source: '(test)',
    origin: 'builtin',
  }));

  // The mocks stand in as one plugin providing every mocked service.
  const mocks = definePlugin({
    id: 'test-mocks',
    version: '0.0.0',
    description: 'mocked services',
    provides: [RedactorRef, ...(options.services ?? []).map(([ref]) => ref)],
  });
  const order = orderPlugins([mocks, ...options.plugins], undefined).filter((p) => p !== mocks);
  for (const plugin of order) {
    const deps: Record<string, unknown> = {};
    for (const [key, dep] of Object.entries(plugin.dependsOn ?? {})) {
      const { ref, optional } = dependencyTarget(dep);
      if (!services.has(ref.id) && !optional) {
        throw new Error(`plugin ${plugin.id}: no service "${ref.id}" (give a mock in services)`);
      }
      deps[key] = services.get(ref.id);
    }
    const instance: PluginInstance | void = await plugin.setup?.(
      {
        pluginId: plugin.id,
        profile: options.profile ?? 'embedded',
        kernelVersion: '0.0.0-test',
        config,
        logger: recordingLogger(logs, { plugin: plugin.id }),
        // One bus object for every plugin, so a test can wrap `kernel.events` to watch them.
        events,
        redactor,
        lifecycle,
        plugins: descriptors,
        provide: (ref, impl) => void services.set(ref.id, impl),
        onStop: (callback) => void stops.push(callback),
        signal: controller.signal,
      },
      deps as never,
    );
    if (instance?.stop) stops.push(() => instance.stop?.());
  }

  return {
    get<T>(ref: ServiceRef<T>): T {
      if (!services.has(ref.id)) throw new Error(`no service "${ref.id}"`);
      return services.get(ref.id) as T;
    },
    events,
    lifecycle,
    config,
    emitted,
    logs,
    ready: () => lifecycle.ready.promise(),
    async stop() {
      controller.abort();
      await lifecycle.beforeStop.promise('test');
      for (const stop of stops.reverse()) await stop();
      stops.length = 0;
    },
  };
}

// Helpers for testing Lua module plugins: their implementations are called directly, as the
// runtime would call them, without Lua.

type Implementation = Record<string, (call: LuaCallContext, ...args: any[]) => any>;

/**
 * Sets the module plugins up against a registry that records what they provide (the Lua runtime
 * stands in for it in production), and returns the implementation of each module by name.
 */
export async function setUpLuaModules(
  plugins: Plugin<any>[],
  services: (readonly [ServiceRef<any>, unknown])[] = [],
  dataDir?: string,
): Promise<{ modules: Map<string, Implementation>; specs: Map<string, LuaModuleSpec>; kernel: TestKernel }> {
  const modules = new Map<string, Implementation>();
  const specs = new Map<string, LuaModuleSpec>();
  const registry: LuaModules = {
    provide(spec, implementation) {
      if (modules.has(spec.name)) throw new Error(`module ${spec.name} provided twice`);
      modules.set(spec.name, implementation as Implementation);
      specs.set(spec.name, spec);
    },
    list: () => [...specs.values()],
  };
  const kernel = await createTestKernel({ plugins, services: [[LuaModulesRef, registry], ...services], dataDir });
  return { modules, specs, kernel };
}

/** A call context as the runtime builds one, with a logger that records its lines. */
export function luaCallContext(
  options: Partial<Omit<LuaCallContext, 'logger'>> = {},
  onLine?: (line: LoggedLine) => void,
): {
  call: LuaCallContext;
  lines: LoggedLine[];
  controller: AbortController;
} {
  const lines: LoggedLine[] = [];
  const controller = new AbortController();
  const logger = (bound: LogFields): Logger => {
    const at =
      (level: LoggedLine['level']) =>
      (message: string, fields?: LogFields): void => {
        const line = { level, message, fields: { ...bound, ...fields } };
        lines.push(line);
        onLine?.(line);
      };
    return {
      debug: at('debug'),
      info: at('info'),
      warn: at('warn'),
      error: at('error'),
      child: (fields) => logger({ ...bound, ...fields }),
    };
  };
  return {
    call: { dryRun: false, signal: controller.signal, logger: logger({}), ...options },
    lines,
    controller,
  };
}

/** A Lua function as the runtime hands it to a module: here backed by a JS function. */
export function fakeLuaFunction(body: (...args: LuaValue[]) => Promise<LuaValue[]> | LuaValue[]): LuaFunctionRef {
  return { kind: 'lua-function', call: async (...args) => body(...args) };
}

/** A promise the test resolves when it chooses: orders concurrent work without sleeping. */
export function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

/**
 * A real self-signed certificate and its key, made by `openssl` in `dir` as an operator would
 * make one, valid for `names` (DNS names or IP addresses; the first is the subject).
 */
export function selfSignedCertificate(
  dir: string,
  file: string,
  names: readonly string[] = ['localhost', '127.0.0.1'],
): { cert: string; key: string } {
  const cert = join(dir, `${file}.pem`);
  const key = join(dir, `${file}.key`);
  const alt = names.map((n) => (/^[\d.]+$|:/.test(n) ? `IP:${n}` : `DNS:${n}`)).join(',');
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'];
  execFileSync(
    'openssl',
    [...args, '-keyout', key, '-out', cert, '-subj', `/CN=${names[0]}`, '-addext', `subjectAltName=${alt}`],
    {
      stdio: 'pipe',
    },
  );
  return { cert, key };
}
