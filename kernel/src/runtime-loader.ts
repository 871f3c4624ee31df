import { join } from 'node:path';
import { kernelDir } from './paths.js';
import { compileCommonJs } from './vendor-loader.js';

// Built on its own into kernel/dist/runtime-loader.cjs (build-runtime.mjs): it loads
// kernel/dist/runtime.cjs, the one CommonJS file that holds the kernel, the SDK and the built-in
// plugins, through V8's code cache, and hands each package entry's dist file its module.
// A command compiles other functions than another (`runner run` the engine and the Lua runtime,
// `runner --help` every command's options): each command keeps a cache of its own, written at
// the end of its first run, so that a `--help` first does not leave `run` without its functions.

type Runtime = Record<string, () => Record<string, unknown>>;

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
  const load = runtime[source];
  if (load === undefined) throw new Error(`${source} is not in kernel/dist/runtime.cjs; run npm run build`);
  return load();
}

function loadRuntime(): Runtime {
  const bundle = compileCommonJs(join(kernelDir, 'dist', 'runtime.cjs'), cacheVariant);
  if (!bundle.cacheUsed) process.once('exit', () => bundle.writeCache());
  return bundle.exports as unknown as Runtime;
}
