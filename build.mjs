// Transpiles each package's TypeScript to <package>/dist with esbuild (one file per module, no
// bundling), so that `node_modules/.bin/runner` and plugin discovery run plain JavaScript.
// Type-checking is `npm run typecheck` (tsc --noEmit); this step only strips types, in well
// under a second, which keeps the README's set-up command quick.
import { readdirSync, rmSync, statSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { build } from 'esbuild';

const root = new URL('.', import.meta.url).pathname;

function packagesUnder(dir) {
  const abs = join(root, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs)
    .map((name) => join(abs, name))
    .filter((p) => statSync(p).isDirectory() && existsSync(join(p, 'package.json')));
}

const packages = [
  join(root, 'plugin-sdk'),
  join(root, 'kernel'),
  ...packagesUnder('plugins'),
  ...packagesUnder('test/fixtures/external-plugins'),
];

function sources(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const started = Date.now();
let files = 0;
for (const pkg of packages) {
  const entryPoints = sources(pkg);
  if (entryPoints.length === 0) continue;
  rmSync(join(pkg, 'dist'), { recursive: true, force: true });
  await build({
    entryPoints,
    outdir: join(pkg, 'dist'),
    outbase: pkg,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  files += entryPoints.length;
}
console.log(
  `built ${files} modules in ${packages.length} packages (${Date.now() - started} ms): ${packages.map((p) => relative(root, p)).join(', ')}`,
);
