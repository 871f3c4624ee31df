import { definePlugin, LuaModulesRef, optional, TemplateEngineRef } from '@runner/plugin-sdk';
import { fileModule } from './src/spec.js';

export { fileModule } from './src/spec.js';

/** The `file` Lua module. The implementation loads in setup so `runner --help` stays quick. */
export const plugin = definePlugin({
  id: 'module-file',
  version: '0.1.0',
  description: 'Lua module file: idempotent, atomic file operations',
  luaModules: [fileModule],
  // Optional: without the template plugin every function but file.template still works.
  dependsOn: { lua: LuaModulesRef, templates: optional(TemplateEngineRef) },
  async setup(_ctx, { lua, templates }) {
    const { createFileModule } = await import('./src/files.js');
    lua.provide(fileModule, createFileModule(templates));
  },
});
