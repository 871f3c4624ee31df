import { existsSync, lstatSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunnerError } from '@runner/plugin-sdk';
import type { TarEntry } from './tar.js';

/**
 * The agent bundle: what `runner agent install` uploads. It is this installation of runner, as
 * built: the kernel, the plugin SDK and every plugin (their `dist/` and package.json, no
 * TypeScript sources or tests), `proto/`, and the production dependencies they need resolved from
 * node_modules exactly as this machine resolves them. No registry is contacted, on either side:
 * the remote host needs only Node.js, sh and tar.
 */
export interface AgentBundle {
  root: string;
  version: string;
  entries: TarEntry[];
  files: number;
  bytes: number;
  /** Native add-ons in the bundle, built for this machine's platform and architecture. */
  nativeAddons: string[];
}

interface PackageJson {
  name?: string;
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  exports?: unknown;
  main?: string;
}

/** The directory holding kernel/, plugin-sdk/ and plugins/, found by walking up from this module. */
export function findInstallRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'kernel', 'package.json');
    if (existsSync(manifest) && (readJson(manifest).name ?? '') === '@runner/kernel') return dir;
    if (dirname(dir) === dir) {
      throw new RunnerError(
        'bundle_unavailable',
        `cannot find the runner installation (kernel/package.json) above ${from}`,
      );
    }
  }
}

function readJson(path: string): PackageJson {
  return JSON.parse(readFileSync(path, 'utf8')) as PackageJson;
}

interface Workspace {
  dir: string;
  manifest: PackageJson & { runner?: { plugin?: boolean; agentBundle?: boolean } };
}

/** The root manifest's `workspaces` (`dir` or `dir/*` entries), else the layout's folders. */
function workspacePackages(root: string): Workspace[] {
  let patterns: string[] = ['plugin-sdk', 'kernel', 'proto', 'plugins/*'];
  try {
    const declared = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { workspaces?: unknown })
      .workspaces;
    if (Array.isArray(declared) && declared.every((w) => typeof w === 'string')) patterns = declared as string[];
  } catch {}
  const dirs: string[] = [];
  for (const pattern of patterns) {
    if (pattern.endsWith('/*')) {
      const parent = join(root, pattern.slice(0, -2));
      if (existsSync(parent)) for (const name of readdirSync(parent).sort()) dirs.push(join(parent, name));
    } else {
      dirs.push(join(root, pattern));
    }
  }
  return dirs
    .filter((d) => existsSync(join(d, 'package.json')))
    .map((dir) => ({ dir, manifest: readJson(join(dir, 'package.json')) }));
}

/**
 * What the agent runs: the kernel, the SDK, every plugin package (`runner.plugin: true`: the
 * kernel discovers and imports them all), and the workspaces those depend on. A package that is
 * not a plugin yet (being written) stays out, as the kernel would leave it out, and so does a
 * plugin marked `runner.agentBundle: false` (the web UI).
 */
function bundledWorkspaces(root: string): Workspace[] {
  const all = workspacePackages(root);
  const byName = new Map(all.map((w) => [w.manifest.name ?? '', w]));
  const chosen = new Set<Workspace>();
  const choose = (w: Workspace | undefined) => {
    if (!w || chosen.has(w)) return;
    chosen.add(w);
    for (const dep of Object.keys({ ...w.manifest.dependencies, ...w.manifest.optionalDependencies }))
      choose(byName.get(dep));
  };
  choose(byName.get('@runner/kernel'));
  choose(byName.get('@runner/plugin-sdk'));
  // A plugin that only a master uses and that carries much with it (the web UI and its build) says
  // `runner.agentBundle: false`; an agent host never serves it.
  for (const w of all) if (w.manifest.runner?.plugin === true && w.manifest.runner.agentBundle !== false) choose(w);
  return all.filter((w) => chosen.has(w));
}

/** Node's lookup: `<dir>/node_modules/<name>`, then each parent's, up to the root. */
function resolvePackage(root: string, from: string, name: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === root || dirname(dir) === dir) return undefined;
  }
}

const SKIPPED_DEPENDENCIES = /^@types\//;

function isWorkspaceFile(name: string): boolean {
  if (name.startsWith('.')) return false;
  if (name.endsWith('.map') || name.endsWith('.tsbuildinfo')) return false;
  // Sources and tests: the bundle runs dist/.
  return !/\.(c|m)?ts$/.test(name) && !/\.test\./.test(name);
}

function isDependencyFile(name: string): boolean {
  return !name.endsWith('.map') && !/\.d\.(c|m)?ts$/.test(name);
}

/** Build intermediates of native add-ons: the .node file is all that loads. */
const SKIPPED_DIRS = new Set(['node_modules', '.git', '.github', 'obj.target', '.deps']);
/** Top-level directories of a workspace package that do not run. */
const SKIPPED_WORKSPACE_DIRS = new Set(['node_modules', 'src', 'test', 'tests', 'fixtures', 'coverage']);

export function collectBundle(root: string = findInstallRoot()): AgentBundle {
  const kernel = readJson(join(root, 'kernel', 'package.json'));
  const version = kernel.version ?? '0.0.0';
  const entries: TarEntry[] = [];
  const nativeAddons: string[] = [];
  let bytes = 0;
  const seenDirs = new Set<string>();
  const archivePath = (abs: string) => relative(root, abs).split(sep).join('/');

  const addDir = (rel: string, mtime: number) => {
    if (rel === '' || seenDirs.has(rel)) return;
    addDir(dirname(rel) === '.' ? '' : dirname(rel), mtime);
    seenDirs.add(rel);
    entries.push({ type: 'dir', path: rel, mode: 0o755, mtime });
  };
  const add = (abs: string, keep: (name: string) => boolean, skipDirs: Set<string>) => {
    const name = abs.slice(abs.lastIndexOf(sep) + 1);
    const stat = lstatSync(abs);
    const rel = archivePath(abs);
    const mtime = stat.mtimeMs / 1000;
    if (stat.isDirectory()) {
      if (!skipDirs.has(name)) for (const child of readdirSync(abs).sort()) add(join(abs, child), keep, skipDirs);
    } else if (stat.isSymbolicLink()) {
      addDir(dirname(rel), mtime);
      entries.push({ type: 'symlink', path: rel, mtime, target: readlinkSync(abs) });
    } else if (stat.isFile() && keep(name)) {
      addDir(dirname(rel), mtime);
      entries.push({ type: 'file', path: rel, mode: stat.mode & 0o777, mtime, size: stat.size, source: abs });
      bytes += stat.size;
      if (name.endsWith('.node')) nativeAddons.push(rel);
    }
  };
  /** The contents of `dir`, not `dir` itself (so its own name is never matched against skipDirs). */
  const walk = (dir: string, keep: (name: string) => boolean, skipDirs: Set<string>) => {
    for (const child of readdirSync(dir).sort()) add(join(dir, child), keep, skipDirs);
  };

  const chosen = bundledWorkspaces(root);
  const workspaces = chosen.map((w) => w.dir);
  const missingBuilds: string[] = [];
  for (const { dir, manifest } of chosen) {
    if (JSON.stringify(manifest.exports ?? manifest.main ?? '').includes('./dist/') && !existsSync(join(dir, 'dist'))) {
      missingBuilds.push(archivePath(dir));
    }
  }
  if (!existsSync(join(root, 'kernel', 'dist', 'src', 'cli', 'main.js'))) missingBuilds.unshift('kernel');
  if (missingBuilds.length > 0) {
    throw new RunnerError(
      'bundle_unavailable',
      `this runner installation is not built (no dist/ in ${[...new Set(missingBuilds)].join(', ')}); run \`npm run build\` in ${root} first`,
    );
  }

  // Production dependencies, resolved from each package's own directory as Node would.
  const dependencyDirs = new Set<string>();
  const visit = (from: string) => {
    const manifest = readJson(join(from, 'package.json'));
    for (const name of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
      if (name.startsWith('@runner/') || SKIPPED_DEPENDENCIES.test(name)) continue;
      const found = resolvePackage(root, from, name);
      // An optional dependency that did not install (another platform's binary) is fine.
      if (!found) {
        if (manifest.optionalDependencies?.[name] !== undefined) continue;
        throw new RunnerError(
          'bundle_unavailable',
          `${archivePath(from) || 'the root'} needs ${name}, which is not installed under ${root}; run \`npm ci\` there first`,
        );
      }
      if (dependencyDirs.has(found)) continue;
      dependencyDirs.add(found);
      visit(found);
    }
  };
  for (const dir of workspaces) visit(dir);

  const now = Date.now() / 1000;
  const packageJson = Buffer.from(
    `${JSON.stringify({ name: 'runner-agent', version, private: true, type: 'module', description: 'runner, as uploaded by runner agent install', workspaces: workspaces.map(archivePath) }, null, 2)}\n`,
  );
  entries.push({
    type: 'file',
    path: 'package.json',
    mode: 0o644,
    mtime: now,
    size: packageJson.length,
    source: packageJson,
  });
  const manifest = Buffer.from(
    `${JSON.stringify({ version, built_at: new Date().toISOString(), built_on: hostname(), platform: process.platform, arch: process.arch, node: process.version }, null, 2)}\n`,
  );
  entries.push({ type: 'file', path: 'BUNDLE.json', mode: 0o644, mtime: now, size: manifest.length, source: manifest });

  for (const dir of workspaces) {
    for (const name of readdirSync(dir).sort()) {
      if (SKIPPED_WORKSPACE_DIRS.has(name) || name.startsWith('.')) continue;
      add(join(dir, name), isWorkspaceFile, new Set(['node_modules']));
    }
    // src/ holds TypeScript by the layout's rule, but keep any asset a plugin reads from there.
    if (existsSync(join(dir, 'src'))) walk(join(dir, 'src'), isWorkspaceFile, new Set(['node_modules', '.scratch']));
  }
  // The workspaces are reached through node_modules/@runner/* links, as npm laid them out.
  for (const {
    dir,
    manifest: { name },
  } of chosen) {
    if (!name) continue;
    const link = `node_modules/${name}`;
    addDir(dirname(link), now);
    entries.push({
      type: 'symlink',
      path: link,
      mtime: now,
      target: relative(join(root, dirname(link)), dir)
        .split(sep)
        .join('/'),
    });
  }
  for (const dir of [...dependencyDirs].sort()) walk(dir, isDependencyFile, SKIPPED_DIRS);

  return { root, version, entries, files: entries.filter((e) => e.type === 'file').length, bytes, nativeAddons };
}

/** `0.1.0-20250102T030405678Z`: the version, and when it was pushed, to the millisecond. */
export function releaseName(version: string, at = new Date()): string {
  return `${version}-${at.toISOString().replace(/[-:.]/g, '')}`;
}
