import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import {
  InvalidInputError,
  LuaModulesRef,
  NotFoundError,
  TemplateEngineRef,
  TemplateError,
  type LuaCallContext,
  type LuaModuleImplementation,
  type LuaModules,
  type LuaModuleSpec,
  type LuaValue,
} from '@runner/plugin-sdk';
import { createTestKernel } from '@runner/plugin-sdk/testing';
import { describe, expect, it } from 'vitest';
import { plugin } from '../index.js';
import { templateModule } from './lua-module.js';

/** Stands in for the Lua runtime: records what plugins provide. */
function fakeLuaModules() {
  const provided: { spec: LuaModuleSpec; implementation: LuaModuleImplementation<string> }[] = [];
  const service: LuaModules = {
    provide(spec, implementation) {
      provided.push({ spec, implementation: implementation as LuaModuleImplementation<string> });
    },
    list: () => provided.map((p) => p.spec),
  };
  return { service, provided };
}

const call: LuaCallContext = {
  dryRun: false,
  logger: { debug() {}, info() {}, warn() {}, error() {}, child: () => call.logger },
  signal: new AbortController().signal,
};

async function boot() {
  const lua = fakeLuaModules();
  const kernel = await createTestKernel({ plugins: [plugin], services: [[LuaModulesRef, lua.service]] });
  expect(lua.provided).toHaveLength(1);
  const impl = lua.provided[0].implementation;
  // Async so that a synchronous throw becomes a rejection, as the Lua runtime would see it.
  const invoke = async (fn: string, ...args: LuaValue[]) => impl[fn](call, ...args);
  return { kernel, lua, invoke };
}

describe('template plugin', () => {
  it('provides the engine and the template Lua module', async () => {
    const { kernel, lua } = await boot();
    expect(plugin.id).toBe('template');
    expect(plugin.provides).toContain(TemplateEngineRef);
    expect(lua.provided[0].spec).toBe(templateModule);
    const engine = kernel.get(TemplateEngineRef);
    expect(engine.render('{{ x }}', { x: 'ok' }, { syntax: 'jinja' })).toBe('ok');
    await kernel.stop();
  });

  it('documents every Lua function', () => {
    expect(plugin.luaModules).toEqual([templateModule]);
    expect(Object.keys(templateModule.functions).sort()).toEqual(['render', 'render_file']);
    for (const spec of Object.values(templateModule.functions)) {
      expect(spec.result).toBe('string');
      expect(spec.description.length).toBeGreaterThan(10);
      expect(spec.sideEffects).toBe(false);
      expect(spec.example).toMatch(/template\.render/);
    }
  });

  it('keeps nunjucks out of the entry module, which `runner --help` imports', async () => {
    const root = dirname(fileURLToPath(import.meta.url));
    const result = await build({
      entryPoints: [join(root, '..', 'index.ts')],
      bundle: true,
      write: false,
      metafile: true,
      platform: 'node',
      format: 'esm',
      conditions: ['runner-source'],
      // As build.mjs does: bundled CommonJS dependencies (tapable) require Node's modules.
      banner: {
        js: "import { createRequire as __testCreateRequire } from 'node:module'; const require = __testCreateRequire(import.meta.url);",
      },
      logLevel: 'silent',
    });
    // Follow static imports only: the engine is loaded with import() in setup.
    const inputs = result.metafile.inputs;
    const seen = new Set<string>();
    const queue = Object.keys(inputs).filter((p) => p.endsWith('template/index.ts'));
    while (queue.length > 0) {
      const file = queue.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      for (const imp of inputs[file]?.imports ?? []) if (imp.kind === 'import-statement') queue.push(imp.path);
    }
    expect([...seen].some((p) => p.includes('template/src/plugin.ts'))).toBe(true);
    expect([...seen].filter((p) => p.includes('nunjucks') || p.includes('template/src/engine.ts'))).toEqual([]);
  });

  it('loads nunjucks only when the first Jinja template is compiled', async () => {
    // The engine bundled (nunjucks left to Node) and run in a fresh process, whose require cache
    // tells whether nunjucks was loaded.
    const root = dirname(fileURLToPath(import.meta.url));
    const out = join(root, '..', `.lazy-check-${process.pid}.mjs`);
    await build({
      entryPoints: [join(root, 'engine.ts')],
      bundle: true,
      outfile: out,
      platform: 'node',
      format: 'esm',
      external: ['nunjucks'],
      conditions: ['runner-source'],
      // As build.mjs does: bundled CommonJS dependencies (tapable) require Node's modules.
      banner: {
        js: "import { createRequire as __testCreateRequire } from 'node:module'; const require = __testCreateRequire(import.meta.url);",
      },
      logLevel: 'silent',
    });
    try {
      const script = `
        import { createRequire } from 'node:module';
        const { createTemplateEngine } = await import(${JSON.stringify(out)});
        const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('/nunjucks/'));
        const engine = createTemplateEngine();
        const steps = [loaded()];
        engine.render('plain text', {}, { syntax: 'jinja' });
        engine.render('{{ .name }}', { name: 'go' }, { syntax: 'go' });
        steps.push(loaded());
        steps.push(engine.render('{{ name }}', { name: 'jinja' }, { syntax: 'jinja' }), loaded());
        console.log(JSON.stringify(steps));`;
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
      expect(child.stderr).toBe('');
      expect(JSON.parse(child.stdout)).toEqual([false, false, 'jinja', true]);
    } finally {
      rmSync(out, { force: true });
    }
  });
});

describe('template Lua module', () => {
  it('render: jinja by default, go on request', async () => {
    const { invoke } = await boot();
    expect(
      await invoke('render', 'deploy {{ app }} to {{ hosts | join(",") }}', { app: 'web', hosts: ['a', 'b'] }),
    ).toBe('deploy web to a,b');
    expect(await invoke('render', '{{ .app | upper }}', { app: 'web' }, { syntax: 'go' })).toBe('WEB');
    // An empty Lua table may arrive as an empty list.
    expect(await invoke('render', 'plain {{ "x" }}', [], [])).toBe('plain x');
    expect(await invoke('render', 'no context', null)).toBe('no context');
  });

  it('render: unknown variables fail with the name given in opts', async () => {
    const { invoke } = await boot();
    const error = await invoke('render', 'a\n{{ app }} {{ ap }}', { app: 'web' }, { name: 'inline' }).catch((e) => e);
    expect(error).toBeInstanceOf(TemplateError);
    expect(error.message).toBe('unknown template variable "ap" at line 2, column 14 in inline');
  });

  it('render: refuses bad arguments with a clear error', async () => {
    const { invoke } = await boot();
    await expect(invoke('render', 42 as LuaValue, {})).rejects.toThrow(InvalidInputError);
    await expect(invoke('render', '{{ x }}', ['a'])).rejects.toThrow(/context must be a table with string keys/);
    await expect(invoke('render', '{{ x }}', {}, { syntax: 'erb' })).rejects.toThrow(
      /opts.syntax must be "jinja" or "go", got "erb"/,
    );
    await expect(invoke('render', '{{ x }}', {}, 'go')).rejects.toThrow(/opts must be a table/);
  });

  it('render_file: reads the file and names it in errors', async () => {
    const { invoke } = await boot();
    const dir = mkdtempSync(join(tmpdir(), 'runner-template-'));
    const good = join(dir, 'nginx.conf.j2');
    writeFileSync(good, 'listen {{ port }};\n{% for h in hosts %}\nserver {{ h }};\n{% endfor %}\n');
    expect(await invoke('render_file', good, { port: 8081, hosts: ['a', 'b'] })).toBe(
      'listen 8081;\nserver a;\nserver b;\n',
    );
    const goFile = join(dir, 'unit.tmpl');
    writeFileSync(goFile, 'Port={{ .port }}\n');
    expect(await invoke('render_file', goFile, { port: 1 }, { syntax: 'go' })).toBe('Port=1\n');

    const bad = join(dir, 'bad.j2');
    writeFileSync(bad, 'ok\n{{ missing }}\n');
    const error = await invoke('render_file', bad, {}).catch((e) => e);
    expect(error).toBeInstanceOf(TemplateError);
    expect(error.message).toBe(`unknown template variable "missing" at line 2, column 4 in ${bad}`);

    await expect(invoke('render_file', join(dir, 'absent.j2'), {})).rejects.toThrow(NotFoundError);
  });
});
