import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { cachedDataVersionTag } from 'node:v8';
import { Script } from 'node:vm';
import { kernelDir } from './paths.js';

// Large CommonJS libraries the build puts in kernel/dist/vendor/<name>.cjs (build.mjs, VENDORED),
// loaded through V8's code cache: Node 20 has no compile cache for ES modules, and fengari alone is
// 600 KB that every `runner run` compiled anew (~20 ms of CPU; with the cache, a few). The cache is
// written beside the bundle when the process exits, so it holds the functions that run compiled,
// not only the top level; each V8 version and set of flags has its own (a cache V8 refuses anyway
// is written again). A bundle directory the user cannot write (a system-wide install) gets no
// cache: the library loads as it would without one.

const loaded = new Map<string, Record<string, unknown>>();

/** The exports of vendored bundle `name`: an object of the modules it was built with, by specifier. */
export function loadVendor(name: string): Record<string, unknown> {
  const done = loaded.get(name);
  if (done) return done;
  const bundle = compileCommonJs(join(kernelDir, 'dist', 'vendor', `${name}.cjs`));
  if (!bundle.cacheUsed) process.once('exit', () => bundle.writeCache());
  loaded.set(name, bundle.exports);
  return bundle.exports;
}

/**
 * A CommonJS file run through the code cache beside it, `<file>.<tag>.v8-cache`. The tag is V8's
 * (its version and flags): a master (`runner server`) and a one-shot command (which sets
 * `--liftoff-only`) each keep their own cache instead of each refusing and rewriting the other's.
 */
export interface CompiledCommonJs {
  exports: Record<string, unknown>;
  /** Whether V8 took the cache (false: there was none, or V8 refused it). */
  cacheUsed: boolean;
  /** Writes the cache of what has been compiled so far; a failure (a read-only directory) is ignored. */
  writeCache(): void;
}

export function compileCommonJs(file: string): CompiledCommonJs {
  const cacheFile = `${file}.${cachedDataVersionTag()}.v8-cache`;
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
