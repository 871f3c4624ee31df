// Helpers for this plugin's tests: a runtime over a registry, a logger that records.
import type {
  LogFields,
  Logger,
  LuaCallContext,
  LuaModuleImplementation,
  LuaModuleSpec,
  LuaRunOptions,
} from '@runner/plugin-sdk';
import { AutoLuaRuntime } from './auto-runtime.js';
import { ModuleRegistry } from './module-registry.js';
import { LuaRuntimeService, type LuaRuntimeOptions } from './runtime.js';
import { WorkerLuaRuntime } from './worker-runtime.js';

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields: LogFields;
}

export interface RecordingLogger extends Logger {
  lines: LogLine[];
  /** Messages of the lines at `level` (all levels when omitted). */
  messages(level?: LogLine['level']): string[];
}

export function recordingLogger(lines: LogLine[] = [], bound: LogFields = {}): RecordingLogger {
  const at =
    (level: LogLine['level']) =>
    (message: string, fields?: LogFields): void => {
      lines.push({ level, message, fields: { ...bound, ...fields } });
    };
  return {
    lines,
    messages: (level) => lines.filter((l) => level === undefined || l.level === level).map((l) => l.message),
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (fields) => recordingLogger(lines, { ...bound, ...fields }),
  };
}

export interface TestRuntime {
  runtime: LuaRuntimeService | WorkerLuaRuntime | AutoLuaRuntime;
  registry: ModuleRegistry;
  logger: RecordingLogger;
  /** Runs `source` with chunk name `test` and the recording logger, plus `options`. */
  run(source: string, options?: Partial<LuaRunOptions>): ReturnType<LuaRuntimeService['run']>;
  /** The values a run returned. */
  values(source: string, options?: Partial<LuaRunOptions>): Promise<unknown[]>;
}

/** A module for tests; its functions may also return what the SDK's types leave out (JS functions, cycles). */
export type TestModule = readonly [
  LuaModuleSpec<any>,
  Readonly<Record<string, (call: LuaCallContext, ...args: any[]) => unknown>>,
];

export function testRuntime(
  options: LuaRuntimeOptions & { modules?: readonly TestModule[]; isolation?: 'inline' | 'worker' | 'auto' } = {},
): TestRuntime {
  const registry = new ModuleRegistry();
  for (const [spec, implementation] of options.modules ?? []) {
    registry.provide(spec, implementation as LuaModuleImplementation<string>);
  }
  // RUNNER_TEST_LUA_ISOLATION=worker (or auto) runs this plugin's tests with scripts in worker
  // threads (or where lua.isolation: auto puts each): the same tests are the contract of every mode.
  const isolation = options.isolation ?? process.env.RUNNER_TEST_LUA_ISOLATION;
  const runtime =
    isolation === 'worker'
      ? new WorkerLuaRuntime(registry, options)
      : isolation === 'auto'
        ? new AutoLuaRuntime(registry, options)
        : new LuaRuntimeService(registry, options);
  const logger = recordingLogger();
  const run = (source: string, runOptions: Partial<LuaRunOptions> = {}) =>
    runtime.run(source, { chunkName: 'test', logger, ...runOptions });
  return {
    runtime,
    registry,
    logger,
    run,
    values: async (source, runOptions) => (await run(source, runOptions)).values,
  };
}

/** A function spec for test modules; `callsLua` for one that calls a Lua function it is given. */
export function fn(sideEffects = false, callsLua = false) {
  return { args: [{ name: '...', type: 'any' }], result: 'any', description: 'test function', sideEffects, callsLua };
}
