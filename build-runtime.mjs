// The runtime: every module of the kernel, the SDK and the built-in plugins in one CommonJS file,
// kernel/dist/runtime.cjs, which kernel/dist/runtime-loader.cjs compiles through V8's code cache
// (kernel/src/runtime-loader.ts). Node 20 has no compile cache for ES modules: as ~70 ES modules,
// a one-task `runner run` spent ~80 ms of CPU resolving, reading, linking and compiling them, and
// compiled every function it called anew. As one script with a cache per command, it does neither.
// Each package entry's dist file (what Node, the plugin discovery, external plugins and the
// benchmarks import by path) is a small ES module that re-exports its module from the runtime, so
// every module still exists once per process: external plugins share the kernel's SDK instance.
// Used by build.mjs, which passes its esbuild options and entries.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join, relative } from 'node:path';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

/** How a module finds itself: the dist file it would have as a file of its own. */
const SELF_URL_BANNER =
  "const Import = require('./runtime-import.cjs'); const __runnerRoot = require('node:path').join(__dirname, '..', '..'); const __runnerUrl = (file) => require('node:url').pathToFileURL(require('node:path').join(__runnerRoot, file)).href;";

/** Strings, comments, and the uses of import.meta that are replaced. */
const CODE_TOKENS =
  /'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`|\/\/[^\n]*|\/\*[\s\S]*?\*\/|import\.meta\.(?:url|dirname)/g;

/**
 * `import.meta` in a CommonJS bundle is empty: each module's `import.meta.url` (and `dirname`)
 * becomes the URL of the dist file it would have in its package, resolved at run time from the
 * runtime's own location (an installed copy, an agent's bundle, may live anywhere).
 */
function importMetaOfEachModule(root, packages) {
  return {
    name: 'import-meta-of-each-module',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        const { readFile } = await import('node:fs/promises');
        const text = await readFile(args.path, 'utf8');
        if (!text.includes('import.meta')) return undefined;
        const pkg = packages.find((p) => args.path.startsWith(`${p}/`));
        if (pkg === undefined) return undefined;
        const own = relative(root, join(pkg, 'dist', relative(pkg, args.path))).replace(/\.ts$/, '.js');
        const url = `__runnerUrl(${JSON.stringify(own)})`;
        // In code only: a string or a comment that mentions import.meta is left as it is.
        const meta = (token) =>
          token === 'import.meta.url' ? url : `require('node:path').dirname(require('node:url').fileURLToPath(${url}))`;
        const contents = text.replace(CODE_TOKENS, (token) => {
          if (token.startsWith('import.meta.')) return meta(token);
          // A template literal's substitutions are code.
          if (token.startsWith('`'))
            return token.replace(/\$\{[^{}]*\}/g, (code) => code.replace(/import\.meta\.(?:url|dirname)/g, meta));
          return token;
        });
        return { contents, loader: 'ts' };
      });
    },
  };
}

/**
 * A package a workspace gets from its own node_modules (npm nested it there because another
 * version sits at the root: modules-host's yauzl 3 beside electron's yauzl 2, notifications'
 * nodemailer beside smtp-server's) is required by its path. The runtime's bare require() resolves
 * from kernel/dist, where it would find the root's version, or in an agent's bundle (which holds
 * the nested copy where the workspace has it) none at all.
 */
function ownNestedPackages(root) {
  const runtimeDir = join(root, 'kernel/dist');
  const shared = createRequire(join(runtimeDir, 'runtime.cjs'));
  return {
    name: 'own-nested-packages',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        if (!args.importer || args.importer.includes('/node_modules/') || args.path.startsWith('node:'))
          return undefined;
        let own;
        try {
          own = createRequire(args.importer).resolve(args.path);
        } catch {
          return undefined;
        }
        if (!own.includes('/node_modules/')) return undefined;
        let root;
        try {
          root = shared.resolve(args.path);
        } catch {
          root = undefined;
        }
        return own === root ? undefined : { path: relative(runtimeDir, own), external: true };
      });
    },
  };
}

/**
 * Builds kernel/dist/runtime.cjs from `entries` ({ in, out } as build.mjs passes them to its ES
 * module build), the loader beside it, and for each entry its re-exporting dist file. `exportsOf`
 * maps an entry's source to the names it exports (from the ES module build's metafile).
 */
export async function buildRuntime({ root, packages, entries, exportsOf, esmOptions, loaderSource }) {
  const runtimeFile = join(root, 'kernel/dist/runtime.cjs');
  const key = (file) => relative(root, file);
  // Each module is required on first use: `runner --version` style commands that touch one entry
  // do not run the others' top levels.
  // `files` maps each entry's dist file to its module, for the kernel's plugin discovery.
  const contents = `exports.modules = {\n${entries
    .map((e) => `  ${JSON.stringify(key(e.in))}: () => require(${JSON.stringify(e.in)}),`)
    .join(
      '\n',
    )}\n};\nexports.files = ${JSON.stringify(Object.fromEntries(entries.map((e) => [`${e.out}.js`, key(e.in)])))};\n`;
  const result = await build({
    ...esmOptions,
    plugins: [importMetaOfEachModule(root, packages), ownNestedPackages(root), ...esmOptions.plugins],
    stdin: { contents, resolveDir: root, sourcefile: 'runtime-entries.cjs', loader: 'js' },
    outfile: runtimeFile,
    format: 'cjs',
    // Every command reads and decodes the whole script (~10 ms a MB here): without the whitespace
    // and with simpler syntax it is a third smaller. Names are kept, for stacks (--debug).
    minifyWhitespace: true,
    minifySyntax: true,
    banner: { js: SELF_URL_BANNER },
    metafile: true,
  });
  // A dynamic import() in a script compiled with a code cache has no callback to load with in
  // Node 20 ("A dynamic import callback was not specified"; vm's importModuleDynamically option is
  // experimental and warns): the runtime's import() calls, of packages left in node_modules and of
  // plugin entries, go through a module Node loads itself, beside the runtime (so they resolve
  // from the same directory). Replaced by a name of the same length, so the source map holds.
  const code = readFileSync(runtimeFile, 'utf8').replace(/(?<![\w$.])import\(/g, 'Import(');
  writeFileSync(runtimeFile, code);
  writeFileSync(
    join(root, 'kernel/dist/runtime-import.cjs'),
    '// import() for kernel/dist/runtime.cjs (build-runtime.mjs).\nmodule.exports = (specifier) => import(specifier);\n',
  );
  await build({
    entryPoints: [loaderSource],
    outfile: join(root, 'kernel/dist/runtime-loader.cjs'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // V8 checks a code cache against its script's length, not its text: the caches are named by
    // the runtime's hash, so a runtime rebuilt to the same length never runs an older one's code.
    define: {
      'import.meta.url': '__runnerLoaderUrl',
      RUNTIME_HASH: JSON.stringify(createHash('sha256').update(code).digest('hex').slice(0, 16)),
    },
    banner: { js: "const __runnerLoaderUrl = require('node:url').pathToFileURL(__filename).href;" },
    logLevel: 'warning',
  });
  for (const e of entries) {
    const file = join(root, `${e.out}.js`);
    const loader = relative(dirname(file), join(root, 'kernel/dist/runtime-loader.cjs'));
    const names = exportsOf(e.in);
    const named = names.filter((n) => n !== 'default');
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(
      file,
      `// ${key(e.in)}, built into kernel/dist/runtime.cjs (build-runtime.mjs); this file re-exports it.
import { createRequire } from 'node:module';
const m = createRequire(import.meta.url)(${JSON.stringify(loader.startsWith('.') ? loader : `./${loader}`)}).runtimeModule(${JSON.stringify(key(e.in))});
${named.length > 0 ? `export const { ${named.join(', ')} } = m;\n` : ''}${names.includes('default') ? 'export default m.default;\n' : ''}`,
    );
  }
  return result;
}
