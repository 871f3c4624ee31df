import { join, relative } from 'node:path';
import { kernelDir } from './paths.js';
import { compileCommonJs } from './vendor-loader.js';

// Built on its own into kernel/dist/runtime-loader.cjs (build-runtime.mjs): it loads
// kernel/dist/runtime.cjs, the one CommonJS file that holds the kernel, the SDK and the built-in
// plugins, through V8's code cache, and hands each package entry's dist file its module.
// A command compiles other functions than another (`runner run` the engine and the Lua runtime,
// `runner --help` every command's options): each command keeps a cache of its own, written at
// the end of its first run, so that a `--help` first does not leave `run` without its functions.

interface Runtime {
  /** Each entry's module by its source path from the repository root. */
  modules: Record<string, () => Record<string, unknown>>;
  /** The source path of the entry built at each dist file (from the repository root). */
  files: Record<string, string>;
}

/** The runtime's hash, set by the build (build-runtime.mjs): part of its caches' names. */
declare const RUNTIME_HASH: string;

let runtime: Runtime | undefined;
let cacheVariant = 'lib';

/**
 * Names the code cache this process uses (kernel/bin/runner.js: the command's first word). Set
 * before the first module is loaded; a process that loads the runtime as a library (a benchmark,
 * a test importing a dist file) uses `lib`.
 */
export function useCacheVariant(name: string): void {
  if (runtime === undefined && /^[a-z][a-z0-9-]*$/.test(name)) cacheVariant = name;
}

/** The exports of the module built from `source` (a path from the repository root). */
export function runtimeModule(source: string): Record<string, unknown> {
  runtime ??= loadRuntime();
  const load = runtime.modules[source];
  if (load === undefined) throw new Error(`${source} is not in kernel/dist/runtime.cjs; run npm run build`);
  return load();
}

/**
 * The exports of the entry whose dist file is `file` (absolute), if the runtime holds it: the
 * plugin discovery takes the built-in plugins from here instead of importing their files.
 */
export function runtimeModuleOfFile(file: string): Record<string, unknown> | undefined {
  runtime ??= loadRuntime();
  const source = runtime.files[relative(join(kernelDir, '..'), file)];
  return source === undefined ? undefined : runtimeModule(source);
}

function loadRuntime(): Runtime {
  const bundle = compileCommonJs(join(kernelDir, 'dist', 'runtime.cjs'), `${cacheVariant}.${RUNTIME_HASH}`);
  if (!bundle.cacheUsed) process.once('exit', () => bundle.writeCache());
  return bundle.exports as unknown as Runtime;
}
