// Issue 19, item 7: no runtime dependency may need a newer Node than the one the README and the
// root package.json state (`npm ci` printed EBADENGINE for ldapts@9, which needs Node 22). Read
// from package-lock.json, which records each installed package's `engines` and whether only
// development needs it: what npm ci installs, without running it. Item 8: every package declares
// what its files import, runtime code in `dependencies`, tests and their helpers in either.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; dev?: boolean; devOptional?: boolean; engines?: { node?: string } }>;
};
const stated = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } }).engines
  .node;

/** The oldest Node the project states it runs on (`>=20.19` gives 20.19.0). */
const oldest = semver.minVersion(stated)!.version;

describe('dependencies fit the stated Node', () => {
  it('the README states the same Node as package.json', () => {
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain(`Node.js ${oldest.replace(/\.0$/, '')} or newer`);
  });

  it('every runtime dependency (not only for development) runs on that Node', () => {
    const needsNewer = Object.entries(lock.packages)
      .filter(([path, meta]) => path.includes('node_modules/') && !meta.dev && !meta.devOptional)
      .filter(([, meta]) => meta.engines?.node && !semver.satisfies(oldest, meta.engines.node))
      .map(
        ([path, meta]) =>
          `${path.slice(path.lastIndexOf('node_modules/') + 13)}@${meta.version}: node ${meta.engines!.node}`,
      );
    expect(needsNewer).toEqual([]);
  });
});

/** A file of a package that only tests use (helpers named so, fixtures). */
const TEST_FILE = /\.test\.|test-support|test-master|fake-|test-fixtures/;
/** The one test runner, at the root for every package. */
const ROOT_TOOLS = new Set(['vitest']);

function files(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files(path, out);
    else if (/\.(ts|mjs|js|cjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The packages a file imports by name (`@scope/name` or `name`), not Node's own. */
function importedPackages(text: string): string[] {
  const specifiers = [
    ...text.matchAll(
      /(?:^|\n)\s*(?:import|export)[^;]*?from\s+['"]([^'".][^'"]*)['"]|import\(\s*['"]([^'".][^'"]*)['"]\)/g,
    ),
  ].map((m) => m[1] ?? m[2]);
  return specifiers
    .filter((s) => !s.startsWith('node:') && !builtinModules.includes(s.split('/')[0]))
    .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]));
}

describe('each package declares what it imports', () => {
  const packages = ['plugin-sdk', 'kernel', ...readdirSync(join(root, 'plugins')).map((p) => `plugins/${p}`)];

  it('runtime files in dependencies, test files in dependencies or devDependencies', () => {
    const undeclared: string[] = [];
    for (const dir of packages) {
      const manifest = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as {
        name: string;
        dependencies?: Record<string, string>;
        devDependencies?: Record<string, string>;
      };
      const runtime = new Set(Object.keys(manifest.dependencies ?? {}));
      const development = new Set(Object.keys(manifest.devDependencies ?? {}));
      for (const file of files(join(root, dir))) {
        const forTests = TEST_FILE.test(file);
        for (const name of importedPackages(readFileSync(file, 'utf8'))) {
          if (name === manifest.name || ROOT_TOOLS.has(name) || runtime.has(name)) continue;
          if (forTests && development.has(name)) continue;
          undeclared.push(
            `${file.slice(root.length + 1)} imports ${name}${development.has(name) ? ' (only a devDependency)' : ''}`,
          );
        }
      }
    }
    expect(undeclared).toEqual([]);
  });
});
