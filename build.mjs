// Builds every package's TypeScript with esbuild into one CommonJS script, kernel/dist/runtime.cjs,
// that the kernel compiles through V8's code cache (build-runtime.mjs, kernel/src/runtime-loader.ts):
// each package entry still gets its dist file (package exports and the modules loaded by path keep
// working), a small ES module that re-exports its module from the runtime. A command then reads
// one script and compiles none of what its first run compiled, which is most of what start-up
// cost (see README, "Start-up"). Every module exists once in the build, so the kernel, the plugins
// and external plugins (through the SDK's dist entry) share one SDK instance.
// Third-party packages stay in node_modules, loaded by Node as they are (sql.js finds its wasm,
// grpc-js its files, pino its worker).
// Type-checking is `npm run typecheck` (tsc --noEmit); this step only strips types and links.
// Test helpers (*.test.ts, test-support.ts, fake-registry.ts, test-master.ts) are not built;
// plugin-sdk/testing.ts is, being the SDK's public test kit.
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join, relative } from 'node:path';
import { build } from 'esbuild';
import { buildRuntime } from './build-runtime.mjs';
import { fengariConcatLimit } from './plugins/lua-runtime/fengari-patch.mjs';

const root = new URL('.', import.meta.url).pathname;

function packagesUnder(dir) {
  const abs = join(root, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs)
    .map((name) => join(abs, name))
    .filter((p) => statSync(p).isDirectory() && existsSync(join(p, 'package.json')));
}

const packages = [join(root, 'plugin-sdk'), join(root, 'kernel'), ...packagesUnder('plugins')];
// External plugins are built on their own, as a third party would build them: against the SDK
// as a package, not into the runner's runtime.
const externalPackages = packagesUnder('test/fixtures/external-plugins');

const TEST_HELPERS = new Set(['test-support.ts', 'fake-registry.ts', 'test-master.ts']);

/** Every module of a package that is built on its own (external plugins). */
function sources(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts') && !TEST_HELPERS.has(name))
      out.push(p);
  }
  return out;
}

// Workspace packages (@runner/*) are bundled from their TypeScript source, and so are pure
// JavaScript libraries spread over many files that Node would each resolve, read and compile
// (TypeBox alone was 200 ESM files on every command; tapable 15 CommonJS ones).
// Only libraries imported statically: esbuild gives a dynamic import() of a bundled CommonJS
// module its default export alone, so a module that loads one lazily imports it statically and
// is itself imported lazily. Every other bare import is left to Node, but VENDORED ones.
const BUNDLED = ['@sinclair/typebox', 'tapable'];
// Vendored libraries, the large CommonJS ones a `runner run` loads, are built on their own into
// kernel/dist/vendor/<name>.cjs, one file (with all their dependencies) that
// kernel/src/vendor-loader.ts compiles through V8's code cache: Node 20 has none for ES modules,
// and these 1.1 MB were compiled anew by every command. Each lists the specifiers the code
// imports; an import of any other is a build error. Their named exports are read from the built
// bundle. pino is built without its transports (worker threads), which runner does not use;
// readline-sync (fengari's debug.debug) runs scripts beside itself and stays in node_modules.
// `from` is the package whose dependency it is: the bundle is built from the copy that package
// resolves, and an importer that would resolve another copy is a build error.
const VENDORED = {
  fengari: {
    from: 'plugins/lua-runtime',
    specifiers: [
      'fengari',
      'fengari/src/defs.js',
      'fengari/src/lobject.js',
      'fengari/src/ltable.js',
      'fengari/src/lopcodes.js',
    ],
  },
  commander: { from: 'kernel', specifiers: ['commander'] },
  yaml: { from: 'plugins/workflow', specifiers: ['yaml'] },
  pino: { from: 'kernel', specifiers: ['pino'] },
  // Its JavaScript only; it reads sql-wasm.wasm beside itself, copied there below.
  sqljs: { from: 'plugins/store', specifiers: ['sql.js'], files: ['sql.js/dist/sql-wasm.wasm'] },
};
const vendorFile = (name) => join(root, 'kernel/dist/vendor', `${name}.cjs`);
// readline-sync (fengari's debug.debug, which reads a line from the terminal) runs scripts that
// sit beside it, so it stays in node_modules; fengari requires it as it loads, and this stand-in
// requires it only when debug.debug first prompts (44 KB less for every run).
const lazyReadlineSync = {
  name: 'lazy-readline-sync',
  setup(b) {
    b.onResolve({ filter: /^readline-sync$/ }, (args) =>
      args.namespace === 'lazy-readline-sync'
        ? { path: args.path, external: true }
        : { path: args.path, namespace: 'lazy-readline-sync' },
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-readline-sync' }, () => ({
      contents: `let options = {};
let loaded;
const load = () => {
  if (loaded === undefined) {
    loaded = require('readline-sync');
    loaded.setDefaultOptions(options);
  }
  return loaded;
};
module.exports = {
  setDefaultOptions: (o) => { options = { ...options, ...o }; if (loaded) loaded.setDefaultOptions(o); },
  prompt: (o) => load().prompt(o),
};
`,
      loader: 'js',
    }));
  },
};
const vendorLoader = join(root, 'kernel/src/vendor-loader.ts');
const vendored = {
  name: 'vendored',
  setup(b) {
    for (const [name, { from, specifiers }] of Object.entries(VENDORED)) {
      const resolveFrom = createRequire(join(root, from, 'package.json'));
      const packageName = specifiers[0].split('/')[0].replace(/[.]/g, '\\.');
      b.onResolve({ filter: new RegExp(`^${packageName}(/|$)`) }, (args) => {
        if (!specifiers.includes(args.path)) {
          return { errors: [{ text: `${args.path} is not among VENDORED.${name} in build.mjs; add it there` }] };
        }
        const own = createRequire(join(args.resolveDir, 'index.js')).resolve(args.path);
        if (own !== resolveFrom.resolve(args.path)) {
          return { errors: [{ text: `${args.path} resolves to ${own} here, not to the copy ${from} vendors` }] };
        }
        return { path: args.path, namespace: 'runner-vendor', pluginData: name };
      });
    }
    b.onLoad({ filter: /.*/, namespace: 'runner-vendor' }, (args) => {
      const exports = createRequire(import.meta.url)(vendorFile(args.pluginData))[args.path];
      const names = Object.keys(exports).filter((k) => k !== 'default' && /^[A-Za-z_$][\w$]*$/.test(k));
      const m = `loadVendor(${JSON.stringify(args.pluginData)})[${JSON.stringify(args.path)}]`;
      return {
        contents: `import { loadVendor } from ${JSON.stringify(vendorLoader)};\nconst m = ${m};\nexport default m;\nexport const { ${names.join(', ')} } = m;\n`,
        resolveDir: root,
        loader: 'js',
      };
    });
  },
};

const thirdPartyExternal = {
  name: 'third-party-external',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      const name = args.path.startsWith('@') ? args.path.split('/').slice(0, 2).join('/') : args.path.split('/')[0];
      // @runner/proto is plain JavaScript that finds runner.proto beside itself: left as it is.
      const bundled = (name.startsWith('@runner/') && name !== '@runner/proto') || BUNDLED.includes(name);
      return bundled ? undefined : { path: args.path, external: true };
    });
  },
};

// Code in the runtime runs with the URL of the dist file it would have (build-runtime.mjs), but only
// entries have such a file beside the files it might look for, so a module that finds a file
// beside itself (`new URL('./worker.js', import.meta.url)`) would look in the wrong place. Refuse
// to build such a module unless it is an entry (ENTRY_FILES); a file that only holds data can also
// be found from the package directory instead.
function checkRelativeUrls(entryFiles) {
  const offenders = packages
    .flatMap((pkg) => sources(pkg))
    .filter((file) => !entryFiles.has(file) && /new URL\(\s*['"`]\.\.?\//.test(readFileSync(file, 'utf8')));
  if (offenders.length > 0) {
    console.error(
      `build: these modules find files relative to import.meta.url but would run inside kernel/dist/runtime.cjs; add them to ENTRY_FILES in build.mjs:\n  ${offenders.map((f) => relative(root, f)).join('\n  ')}`,
    );
    process.exit(1);
  }
}

const started = Date.now();
for (const pkg of [...packages, ...externalPackages]) rmSync(join(pkg, 'dist'), { recursive: true, force: true });

// Entries: what is imported by path from outside the build (package exports, the bin, the SDK
// resolve hook, modules the benchmarks load directly). Everything else, dynamic imports
// included, is reached from them and built into the runtime.
const ENTRY_FILES = [
  'kernel/src/cli/main.ts',
  'kernel/src/sdk-resolve-hook.ts',
  'plugin-sdk/testing.ts',
  'plugin-sdk/schema.ts',
  'plugins/agent/src/client.ts',
  'plugins/agent-transport/src/token.ts',
  'plugins/agent-transport/src/master.ts',
  'plugins/store/src/sql-store.ts',
];
const entryPoints = [...packages.map((pkg) => join(pkg, 'index.ts')), ...ENTRY_FILES.map((f) => join(root, f))]
  .filter((file) => existsSync(file))
  .map((file) => {
    const pkg = packages.find((p) => file.startsWith(`${p}/`));
    return { in: file, out: relative(root, join(pkg, 'dist', relative(pkg, file))).replace(/\.ts$/, '') };
  });
checkRelativeUrls(new Set(entryPoints.map((e) => e.in)));
for (const [name, { from, specifiers, files = [] }] of Object.entries(VENDORED)) {
  const resolveFrom = createRequire(join(root, from, 'package.json'));
  mkdirSync(join(root, 'kernel/dist/vendor'), { recursive: true });
  for (const file of files) copyFileSync(resolveFrom.resolve(file), join(root, 'kernel/dist/vendor', basename(file)));
  await build({
    stdin: {
      contents: `module.exports = {${specifiers.map((s) => `${JSON.stringify(s)}: require(${JSON.stringify(s)})`).join(', ')}};`,
      resolveDir: join(root, from),
      sourcefile: `vendor-${name}.cjs`,
      loader: 'js',
    },
    outfile: vendorFile(name),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    plugins: [lazyReadlineSync, fengariConcatLimit],
    logLevel: 'warning',
  });
}

const esmOptions = {
  bundle: true,
  conditions: ['runner-source'],
  plugins: [vendored, thirdPartyExternal],
  // The bundled CommonJS libraries require Node's built-ins; ESM output has no require of its own.
  banner: {
    js: "import { createRequire as __runnerCreateRequire } from 'node:module'; const require = __runnerCreateRequire(import.meta.url);",
  },
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
};
// The ES module build with code splitting is not written: its metafile names each entry's exports
// and the modules it reaches (the test-helper check below). What is written is the runtime
// (build-runtime.mjs): every entry in kernel/dist/runtime.cjs, each entry's dist file re-exporting
// it. The SDK resolve hook, which Node loads by path on a thread of its own, is a file of its own.
const RESOLVE_HOOK = join(root, 'kernel/src/sdk-resolve-hook.ts');
const main = await build({
  ...esmOptions,
  entryPoints,
  metafile: true,
  outdir: root,
  splitting: true,
  chunkNames: 'kernel/dist/chunks/[name]-[hash]',
  write: false,
});
const exportsByEntry = new Map(
  Object.values(main.metafile.outputs)
    .filter((o) => o.entryPoint !== undefined)
    .map((o) => [join(root, o.entryPoint), o.exports]),
);
await build({ ...esmOptions, entryPoints: [RESOLVE_HOOK], outfile: join(root, 'kernel/dist/src/sdk-resolve-hook.js') });
await buildRuntime({
  root,
  packages,
  entries: entryPoints.filter((e) => e.in !== RESOLVE_HOOK),
  exportsOf: (file) => {
    const names = exportsByEntry.get(file);
    if (names === undefined) throw new Error(`build: no exports found for entry ${file}`);
    return names;
  },
  esmOptions,
  loaderSource: join(root, 'kernel/src/runtime-loader.ts'),
});
// The Lua worker thread's entry (loaded by path, plugins/lua-runtime/src/worker-pool.ts) is one
// file of its own, not part of the runtime: a worker is a fresh isolate that compiles
// everything it imports, and the chunks it once shared held the whole SDK with child_process, crypto
// and the master client (~45 ms of the worker's start). Alone, it holds only what it uses;
// fengari still comes from the vendored bundle and its code cache.
// The SDK's modules have no side effects the worker needs: marked so, the ones it does not use
// (the kernel lifecycle with tapable, the master client with crypto and TLS) are left out with their imports.
const sdkWithoutSideEffects = {
  name: 'sdk-without-side-effects',
  setup(b) {
    const sdk = join(root, 'plugin-sdk') + '/';
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === 'sdk' || !(args.path === '@runner/plugin-sdk' || args.importer.startsWith(sdk))) return;
      const resolved = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: 'sdk' });
      if (resolved.errors.length > 0 || resolved.external || !resolved.path.startsWith(sdk)) return resolved;
      return { ...resolved, sideEffects: false };
    });
  },
};
const worker = await build({
  ...esmOptions,
  plugins: [sdkWithoutSideEffects, ...esmOptions.plugins],
  entryPoints: [join(root, 'plugins/lua-runtime/src/worker-entry.ts')],
  metafile: true,
  outfile: join(root, 'plugins/lua-runtime/dist/src/worker-entry.js'),
});
// The template worker thread's entry (plugins/template/src/render-pool.ts), alone for the same reason.
const renderWorker = await build({
  ...esmOptions,
  plugins: [sdkWithoutSideEffects, ...esmOptions.plugins],
  entryPoints: [join(root, 'plugins/template/src/render-worker.ts')],
  metafile: true,
  outfile: join(root, 'plugins/template/dist/src/render-worker.js'),
});
const metafile = {
  inputs: { ...main.metafile.inputs, ...worker.metafile.inputs, ...renderWorker.metafile.inputs },
};

// A test helper reached from production code would ship in dist/: refuse it.
const testCode = Object.keys(metafile.inputs).filter((input) => {
  const name = input.split('/').pop();
  return TEST_HELPERS.has(name) || name.endsWith('.test.ts');
});
if (testCode.length > 0) {
  console.error(`build: production code imports test helpers, which would ship in dist/:\n  ${testCode.join('\n  ')}`);
  process.exit(1);
}

// The desktop app (desktop/): Electron loads CommonJS, and its sandboxed preload may require
// nothing but `electron`, so both entries are bundled whole (the SDK included) into CommonJS.
// `electron` is left to Electron. import.meta.url, which the SDK's lazy requires use, becomes
// the bundle's own file URL.
const desktop = join(root, 'desktop');
rmSync(join(desktop, 'dist'), { recursive: true, force: true });
const desktopOptions = {
  outdir: join(desktop, 'dist'),
  outExtension: { '.js': '.cjs' },
  bundle: true,
  metafile: true,
  conditions: ['runner-source'],
  external: ['electron'],
  platform: 'node',
  format: 'cjs',
  // Electron 45 runs Node 22.
  target: 'node22',
  sourcemap: 'linked',
  logLevel: 'warning',
};
const desktopBuilds = [
  await build({
    ...desktopOptions,
    entryPoints: [{ in: join(desktop, 'src/main.ts'), out: 'main' }],
    define: { 'import.meta.url': '__runnerImportMetaUrl' },
    banner: { js: "const __runnerImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  }),
  // No banner: the sandboxed preload has no Node modules to require.
  await build({
    ...desktopOptions,
    entryPoints: [
      { in: join(desktop, 'src/preload.ts'), out: 'preload' },
      { in: join(desktop, 'src/preload-connections.ts'), out: 'preload-connections' },
    ],
  }),
];
const desktopTestCode = desktopBuilds
  .flatMap((b) => Object.keys(b.metafile.inputs))
  .filter((input) => input.endsWith('.test.ts'));
if (desktopTestCode.length > 0) {
  console.error(`build: desktop code imports tests:\n  ${desktopTestCode.join('\n  ')}`);
  process.exit(1);
}

let externalFiles = 0;
for (const pkg of externalPackages) {
  const files = sources(pkg);
  externalFiles += files.length;
  await build({
    entryPoints: files,
    outdir: join(pkg, 'dist'),
    outbase: pkg,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
}
console.log(
  `built ${entryPoints.length} entries (in kernel/dist/runtime.cjs) and ${externalFiles} external-plugin modules in ${packages.length + externalPackages.length} packages, and the desktop app's main and preload (${Date.now() - started} ms): ${[...packages, ...externalPackages].map((p) => relative(root, p)).join(', ')}`,
);

// The OpenAPI document and the UI's typed client, from the plugins' route declarations (generated
// files, not in git: scripts/openapi.mjs). Before the UI, which is built against them.
{
  const { spawnSync } = await import('node:child_process');
  const result = spawnSync(process.execPath, [join(root, 'scripts/openapi.mjs')], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(
      `build: writing the OpenAPI document and the UI client failed (node scripts/openapi.mjs) with status ${result.status}`,
    );
    process.exit(1);
  }
}

// The web UI (ui/, SvelteKit) builds with Vite into ui/build, served by plugins/ui. It is rebuilt
// only when its sources changed: a hash of every source file is kept beside the output, so a build
// of the TypeScript packages alone stays fast.
await buildUi();

async function buildUi() {
  const uiDir = join(root, 'ui');
  if (!existsSync(join(uiDir, 'package.json'))) return;
  const { createHash } = await import('node:crypto');
  const hash = createHash('sha256');
  const inputs = ['package.json', 'svelte.config.js', 'vite.config.ts', 'tsconfig.json', 'src', 'static'];
  const walk = (p) => {
    if (!existsSync(p)) return;
    if (statSync(p).isDirectory()) for (const name of readdirSync(p).sort()) walk(join(p, name));
    else if (!p.endsWith('.test.ts')) hash.update(relative(uiDir, p)).update('\0').update(readFileSync(p));
  };
  for (const input of inputs) walk(join(uiDir, input));
  const digest = hash.digest('hex');
  const stamp = join(uiDir, 'build', '.source-hash');
  if (existsSync(join(uiDir, 'build', 'index.html')) && existsSync(stamp) && readFileSync(stamp, 'utf8') === digest) {
    console.log('ui: up to date (ui/build)');
    return;
  }
  const uiStarted = Date.now();
  const { spawnSync } = await import('node:child_process');
  const vite = join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  const result = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], { cwd: uiDir, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`build: the web UI build failed (cd ui && npx vite build) with status ${result.status}`);
    process.exit(1);
  }
  const { writeFileSync } = await import('node:fs');
  writeFileSync(stamp, digest);
  console.log(`ui: built ui/build (${Date.now() - uiStarted} ms)`);
}
