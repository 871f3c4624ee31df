import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { cachedDataVersionTag } from 'node:v8';
import { Script } from 'node:vm';
import { isMainThread } from 'node:worker_threads';
import { kernelDir } from './paths.js';

// Large CommonJS libraries the build puts in kernel/dist/vendor/<name>.cjs (build.mjs, VENDORED),
// loaded through V8's code cache: Node 20 has no compile cache for ES modules, and fengari alone is
// 600 KB that every `runner run` compiled anew (~20 ms of CPU; with the cache, a few). The cache is
// written beside the bundle when the process exits, so it holds the functions that run compiled,
// not only the top level; each V8 version and set of flags has its own (a cache V8 refuses anyway
// is written again). A bundle directory the user cannot write (a system-wide install) gets no
// cache: the library loads as it would without one.

const loaded = new Map<string, Record<string, unknown>>();
/**
 * The process event on which a worker thread writes the caches its vendored libraries lacked: it is
 * usually ended (terminated, or the process exits) without an exit event of its own, so its code
 * emits this once the libraries have done their work (the Lua worker, after its first script). A
 * process event, not an import: the plugins that run in workers do not import the kernel.
 */
export const WRITE_VENDOR_CACHES = 'runner:write-vendor-caches';
const unwritten: CompiledCommonJs[] = [];

/** The exports of vendored bundle `name`: an object of the modules it was built with, by specifier. */
export function loadVendor(name: string): Record<string, unknown> {
  const done = loaded.get(name);
  if (done) return done;
  // A worker thread (the Lua worker) runs other functions of the library than the main thread (the
  // Lua VM where the main thread only compiles scripts): it keeps a cache of its own, which the
  // main thread's would otherwise pre-empt, written on WRITE_VENDOR_CACHES.
  const bundle = compileCommonJs(join(kernelDir, 'dist', 'vendor', `${name}.cjs`), isMainThread ? '' : 'worker');
  if (!bundle.cacheUsed) {
    if (isMainThread) process.once('exit', () => bundle.writeCache());
    else {
      if (unwritten.length === 0) process.once(WRITE_VENDOR_CACHES, writeVendorCaches);
      unwritten.push(bundle);
    }
  }
  loaded.set(name, bundle.exports);
  return bundle.exports;
}

function writeVendorCaches(): void {
  for (const bundle of unwritten.splice(0)) bundle.writeCache();
}

/**
 * A CommonJS file run through the code cache beside it, `<file>.<tag>.v8-cache`. The tag is V8's
 * (its version and flags): a master (`runner server`) and a one-shot command (which sets
 * `--liftoff-only`) each keep their own cache instead of each refusing and rewriting the other's.
 * `variant` names another cache of the same file (`<file>.<tag>.<variant>.v8-cache`).
 */
export interface CompiledCommonJs {
  exports: Record<string, unknown>;
  /** Whether V8 took the cache (false: there was none, or V8 refused it). */
  cacheUsed: boolean;
  /** Writes the cache of what has been compiled so far; a failure (a read-only directory) is ignored. */
  writeCache(): void;
}

export function compileCommonJs(file: string, variant = ''): CompiledCommonJs {
  const cacheFile = `${file}.${cachedDataVersionTag()}${variant === '' ? '' : `.${variant}`}.v8-cache`;
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // No cache yet.
  }
  const wrapper = `(function (exports, require, module, __filename, __dirname) {${readFileSync(file, 'utf8')}\n})`;
  const script = new Script(wrapper, { filename: file, cachedData });
  const module = { exports: {} as Record<string, unknown> };
  (script.runInThisContext() as (...args: unknown[]) => void).call(
    module.exports,
    module.exports,
    createRequire(file),
    module,
    file,
    dirname(file),
  );
  return {
    exports: module.exports,
    cacheUsed: cachedData !== undefined && script.cachedDataRejected === false,
    writeCache: () => writeCache(script, cacheFile),
  };
}

function writeCache(script: Script, cacheFile: string): void {
  const temp = `${cacheFile}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, script.createCachedData());
    // Renamed into place: a process starting meanwhile reads the old cache or the new one, whole.
    renameSync(temp, cacheFile);
  } catch {
    // A read-only install: no cache, no harm.
    try {
      unlinkSync(temp);
    } catch {}
  }
}
