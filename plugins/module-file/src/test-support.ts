import {
  LuaModulesRef,
  type LogFields,
  type Logger,
  type LuaCallContext,
  type LuaFunctionRef,
  type LuaModules,
  type LuaModuleSpec,
  type LuaValue,
  type Plugin,
  type ServiceRef,
} from '@runner/plugin-sdk';
import { createTestKernel, type TestKernel } from '@runner/plugin-sdk/testing';

export interface LoggedLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields: LogFields;
}

type Implementation = Record<string, (call: LuaCallContext, ...args: any[]) => any>;

/**
 * Sets the module plugins up against a registry that records what they provide (the Lua runtime
 * stands in for it in production), and returns the implementation of each module by name.
 */
export async function provided(
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
export function callContext(
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
export function luaFunction(body: (...args: LuaValue[]) => Promise<LuaValue[]> | LuaValue[]): LuaFunctionRef {
  return { kind: 'lua-function', call: async (...args) => body(...args) };
}

/** A promise the test resolves when it chooses: orders concurrent work without sleeping. */
export function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}
