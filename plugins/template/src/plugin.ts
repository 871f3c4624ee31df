import { definePlugin, LuaModulesRef, TemplateEngineRef } from '@runner/plugin-sdk';
import { createTemplateModule, templateModule } from './lua-module.js';

/**
 * Provides the TemplateEngine service (Jinja via nunjucks, and Go text/template syntax) and the
 * `template` Lua module. The engine is imported in setup, not here: `runner --help` imports this
 * file, and nunjucks alone takes longer to load than its whole start-up budget allows.
 */
export const plugin = definePlugin({
  id: 'template',
  version: '0.1.0',
  description: 'Templates in Jinja (nunjucks) and Go text/template syntax; the `template` Lua module',
  dependsOn: { lua: LuaModulesRef },
  provides: [TemplateEngineRef],
  luaModules: [templateModule],
  config: {
    'template.cache_size': {
      schema: { type: 'integer', minimum: 0 },
      default: 1000,
      help: 'compiled templates kept in memory',
    },
    'template.workers': {
      schema: { type: 'integer', minimum: 1 },
      default: 4,
      help: "worker threads rendering templates with loops, calls or filters at once (each bounded by its task's timeout and memory limit); more wait",
    },
  },
  async setup(ctx, { lua }) {
    const [{ createTemplateEngine }, { RenderPool }] = await Promise.all([
      import('./engine.js'),
      import('./render-pool.js'),
    ]);
    const engine = createTemplateEngine({
      cacheSize: ctx.config.get<number>('template.cache_size'),
      workers: new RenderPool({ max: ctx.config.get<number>('template.workers') }),
    });
    ctx.provide(TemplateEngineRef, engine);
    ctx.onStop(() => engine.close());
    lua.provide(templateModule, createTemplateModule(engine));
  },
});
