// A module of this checkout that no package exports (an engine's internals), for a bench that
// measures it: bundled from its TypeScript with esbuild, as build.mjs bundles the runtime (the
// workspace packages from their source), into a temporary file, then imported.
import { mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = resolve(import.meta.dirname, '../../..');

/** Imports `path` (relative to the checkout, e.g. `plugins/template/src/engine.ts`). */
export async function importSource(path) {
  // Inside the checkout (a gitignored name), so that the packages left out resolve from node_modules.
  const dir = mkdtempSync(join(root, 'test/bench/.runner-test-source-'));
  const outfile = join(dir, 'module.mjs');
  try {
    await build({
      entryPoints: [join(root, path)],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      conditions: ['runner-source'],
      plugins: [thirdPartyExternal],
      logLevel: 'error',
    });
    return await import(pathToFileURL(outfile).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Third-party packages load from node_modules as they are; the workspace's are bundled. */
const thirdPartyExternal = {
  name: 'third-party-external',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('@runner/') ? undefined : { path: args.path, external: true },
    );
  },
};
