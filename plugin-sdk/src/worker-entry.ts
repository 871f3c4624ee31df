import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface WorkerEntryOptions {
  /** `import.meta.url` of the module that starts the worker. */
  moduleUrl: string;
  /** The plugin's package name (`@runner/plugin-template`). */
  packageName: string;
  /** The entry's file name in the package's src/ without extension (`render-worker`). */
  entry: string;
  /** esbuild plugins the bundle from source needs (fengari's patch for the Lua worker). */
  esbuildPlugins?: () => Promise<unknown[]>;
}

/**
 * A worker thread's entry file of a plugin. Built, it is dist/src/<entry>.js of the package (an
 * entry of build.mjs). From source (vitest), Node cannot load TypeScript in a worker, so the entry
 * is bundled once per call into a temporary file with esbuild, a development dependency: callers
 * keep the promise.
 */
export async function pluginWorkerEntry(options: WorkerEntryOptions): Promise<string> {
  const here = fileURLToPath(options.moduleUrl);
  const pkg = packageDir(dirname(here), options.packageName);
  if (!here.endsWith('.ts')) return join(pkg, 'dist', 'src', `${options.entry}.js`);
  // By name: the workers' own bundles (build.mjs) hold the SDK, and must not reach for esbuild.
  const devTool = 'esbuild';
  const [{ build }, plugins] = await Promise.all([
    import(devTool) as Promise<typeof import('esbuild')>,
    options.esbuildPlugins?.() ?? [],
  ]);
  // Inside the package, so that what the entry requires at run time (nunjucks) resolves from it.
  const cache = join(pkg, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const outfile = join(mkdtempSync(join(cache, `runner-${options.entry}-`)), `${options.entry}.mjs`);
  await build({
    entryPoints: [join(pkg, 'src', `${options.entry}.ts`)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['runner-source'],
    // Only what the SDK loads lazily with require (tapable...) stays outside.
    banner: {
      js: "import { createRequire as __runnerCreateRequire } from 'node:module'; const require = __runnerCreateRequire(import.meta.url);",
    },
    plugins: plugins as never[],
    logLevel: 'warning',
  });
  return outfile;
}

/**
 * The package's directory, found by walking up from a module of it: built, the module runs inside
 * kernel/dist/runtime.cjs as if it were in dist/src/ of its package (build-runtime.mjs).
 */
function packageDir(from: string, packageName: string): string {
  const folder = packageName.replace(/^@runner\/plugin-/, '');
  for (let dir = from; ; dir = dirname(dir)) {
    for (const candidate of [dir, join(dir, 'plugins', folder)]) {
      const manifest = join(candidate, 'package.json');
      if (
        existsSync(manifest) &&
        (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === packageName
      )
        return candidate;
    }
    if (dirname(dir) === dir) throw new Error(`cannot find the ${folder} plugin's directory above ${from}`);
  }
}
