import { definePlugin, LuaModulesRef, optional, TemplateEngineRef } from '@runner/plugin-sdk';
import { helmModule } from './src/helm-spec.js';
import { k8sModule } from './src/k8s-spec.js';

export { helmModule } from './src/helm-spec.js';
export { k8sModule } from './src/k8s-spec.js';

/**
 * The `k8s` and `helm` Lua modules. The implementations, and the Kubernetes client with them, load
 * on setup's import and the client on the first call, so `runner --help` reads declarations only.
 */
export const plugin = definePlugin({
  id: 'modules-kubernetes',
  version: '0.1.0',
  description: 'Lua modules k8s and helm',
  luaModules: [k8sModule, helmModule],
  // Optional: without the template plugin every function but apply with a context still works.
  dependsOn: { lua: LuaModulesRef, templates: optional(TemplateEngineRef) },
  async setup(_ctx, { lua, templates }) {
    const [{ createK8sModule }, { createHelmModule }] = await Promise.all([
      import('./src/k8s.js'),
      import('./src/helm.js'),
    ]);
    const render = templates
      ? (source: string, context: Record<string, unknown>, syntax: 'jinja' | 'go') =>
          templates.render(source, context, { syntax, name: 'k8s.apply manifest' })
      : undefined;
    lua.provide(k8sModule, createK8sModule({ render }));
    lua.provide(helmModule, createHelmModule());
  },
});
