import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isPlugin, type Plugin, type PluginDescriptor } from '@runner/plugin-sdk';
import { PluginGraphError, PluginLoadError, messageOf } from './errors.js';
import { kernelDir } from './paths.js';

/** A plugin found on disk, with where it came from. */
export interface DiscoveredPlugin {
  plugin: Plugin;
  descriptor: PluginDescriptor;
}

export interface DiscoveryOptions {
  /** The built-in `plugins/` directory. */
  builtinDir: string;
  /** Extra directories (`--plugins-dir`, config `plugins.dirs`, `RUNNER_PLUGINS_DIR`). */
  extraDirs?: readonly string[];
}

interface PackageJson {
  name?: string;
  main?: string;
  exports?: unknown;
  runner?: { plugin?: boolean };
}

// Under vitest the kernel itself is TypeScript source, so plugins are imported from source too
// (their `runner-source` export); a built kernel imports their built JavaScript.
const fromSource = import.meta.url.endsWith('.ts');

/**
 * Finds and imports every plugin. A directory is a plugin package when its package.json has
 * `"runner": { "plugin": true }`; an extra directory may be one package or hold several.
 * Duplicate ids are refused here, across all directories, before anything is set up.
 */
export async function discoverPlugins(options: DiscoveryOptions): Promise<DiscoveredPlugin[]> {
  const packages: { dir: string; origin: PluginDescriptor['origin'] }[] = [];
  for (const dir of packageDirsIn(options.builtinDir, 'builtin')) packages.push({ dir, origin: 'builtin' });
  for (const extra of options.extraDirs ?? []) {
    for (const dir of packageDirsIn(resolve(extra), 'external')) packages.push({ dir, origin: 'external' });
  }

  if (packages.some((p) => p.origin === 'external')) shareSdkWithExternalPlugins();
  const loaded = await Promise.all(packages.map(({ dir, origin }) => importPackage(dir, origin)));
  const found = loaded.flat();
  const seen = new Map<string, DiscoveredPlugin>();
  for (const entry of found) {
    const earlier = seen.get(entry.plugin.id);
    if (earlier) {
      throw new PluginGraphError(
        'plugin_duplicate',
        `plugin id "${entry.plugin.id}" is declared twice: in ${earlier.descriptor.source} and in ${entry.descriptor.source}`,
        { pluginId: entry.plugin.id },
      );
    }
    seen.set(entry.plugin.id, entry);
  }
  return found;
}

let sdkShared = false;

/**
 * Lets plugins outside the repository import `@runner/plugin-sdk` (see sdk-resolve-hook.ts).
 * Registered only when there are such plugins: the hook runs on a thread of its own, which costs
 * start-up time every other command need not pay. Under vitest (source mode) the test runner does
 * its own resolution and Node cannot load the TypeScript hook, so it is skipped there.
 */
function shareSdkWithExternalPlugins(): void {
  if (sdkShared || fromSource) return;
  sdkShared = true;
  // By the kernel's directory, not this module's URL: the build may place this code in a chunk.
  register(pathToFileURL(join(kernelDir, 'dist/src/sdk-resolve-hook.js')), { data: { kernelUrl: import.meta.url } });
}

/**
 * Built, the built-in plugins are modules of kernel/dist/runtime.cjs (build-runtime.mjs): taken
 * from it by their entry's file, they cost no module load of their own (two dozen files that every
 * command read, resolved and linked). From source (vitest) there is no runtime.
 */
function fromRuntime(entry: string): Record<string, unknown> | undefined {
  if (fromSource) return undefined;
  const loader = createRequire(import.meta.url)(join(kernelDir, 'dist', 'runtime-loader.cjs')) as {
    runtimeModuleOfFile(file: string): Record<string, unknown> | undefined;
  };
  return loader.runtimeModuleOfFile(entry);
}

function packageDirsIn(dir: string, origin: PluginDescriptor['origin']): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    if (origin === 'builtin') return [];
    throw new PluginLoadError('plugin_dir_missing', `plugins directory ${dir} does not exist or is not a directory`);
  }
  // Real paths, so a symlinked plugin resolves its imports from where it really lives.
  if (isPluginPackage(dir)) return [realpathSync(dir)];
  return readdirSync(dir)
    .sort()
    .map((name) => join(dir, name))
    .filter((p) => statSync(p).isDirectory() && isPluginPackage(p))
    .map((p) => realpathSync(p));
}

function isPluginPackage(dir: string): boolean {
  const manifest = join(dir, 'package.json');
  return existsSync(manifest) && readManifest(manifest).runner?.plugin === true;
}

function readManifest(path: string): PackageJson {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as PackageJson;
  } catch (error) {
    throw new PluginLoadError('plugin_manifest_invalid', `${path}: not valid JSON: ${messageOf(error)}`, {
      cause: error,
    });
  }
}

function entryOf(dir: string, manifest: PackageJson): string {
  const root = (manifest.exports as Record<string, unknown> | undefined)?.['.'] ?? manifest.exports;
  if (root && typeof root === 'object') {
    const conditions = root as Record<string, string>;
    const pick = (fromSource && conditions['runner-source']) || conditions['import'] || conditions['default'];
    if (pick) return join(dir, pick);
  }
  if (typeof root === 'string') return join(dir, root);
  return join(dir, manifest.main ?? 'index.js');
}

async function importPackage(dir: string, origin: PluginDescriptor['origin']): Promise<DiscoveredPlugin[]> {
  const manifest = readManifest(join(dir, 'package.json'));
  const entry = entryOf(dir, manifest);
  if (!existsSync(entry)) {
    const hint = entry.includes(`${'/'}dist${'/'}`) ? ' (run `npm run build`)' : '';
    throw new PluginLoadError('plugin_entry_missing', `plugin package ${dir}: entry ${entry} does not exist${hint}`);
  }
  let exports: Record<string, unknown>;
  try {
    exports =
      (origin === 'builtin' ? fromRuntime(entry) : undefined) ??
      ((await import(pathToFileURL(entry).href)) as Record<string, unknown>);
  } catch (error) {
    throw new PluginLoadError(
      'plugin_import_failed',
      `plugin package ${dir}: importing ${entry} failed: ${messageOf(error)}`,
      { cause: error },
    );
  }
  const plugins = Object.values(exports).filter(isPlugin);
  if (plugins.length === 0) {
    throw new PluginLoadError(
      'plugin_export_missing',
      `plugin package ${dir}: ${entry} exports no plugin (export the result of definePlugin)`,
    );
  }
  return plugins.map((plugin) => ({
    plugin,
    descriptor: Object.freeze({
      id: plugin.id,
      version: plugin.version,
      description: plugin.description,
      source: dir,
      origin,
    }),
  }));
}
