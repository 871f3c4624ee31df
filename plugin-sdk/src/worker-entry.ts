import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface WorkerEntryOptions {
  /** `import.meta.url` of the module that starts the worker. */
  moduleUrl: string;
  /** The plugin's package name (`@runner/plugin-template`). */
  packageName: string;
  /** The entry's file name in the package's src/ without extension (`render-worker`). */
  entry: string;
}

/**
 * A worker thread's entry file of a plugin: dist/src/<entry>.js of its package, an entry of
 * build.mjs, also when the rest runs from source (vitest builds before any test file:
 * test/global-setup.ts), since Node cannot load TypeScript in a worker. Bundling it here instead
 * would import esbuild, a build tool, from plugin code at run time.
 */
export async function pluginWorkerEntry(options: WorkerEntryOptions): Promise<string> {
  const pkg = packageDir(dirname(fileURLToPath(options.moduleUrl)), options.packageName);
  const file = join(pkg, 'dist', 'src', `${options.entry}.js`);
  if (!existsSync(file)) throw new Error(`the worker entry ${file} is not built: run npm run build`);
  return file;
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
