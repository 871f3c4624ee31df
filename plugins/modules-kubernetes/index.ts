import { defineLuaModulePlugin, offerLuaModule, optional, TemplateEngineRef } from '@runner/plugin-sdk';
import { helmModule } from './src/helm-spec.js';
import { k8sModule } from './src/k8s-spec.js';

export { helmModule } from './src/helm-spec.js';
export { k8sModule } from './src/k8s-spec.js';

// Optional: without the template plugin every function but k8s.apply with a context still works.
const dependsOn = { templates: optional(TemplateEngineRef) };
type Deps = typeof dependsOn;

/**
 * The `k8s` and `helm` Lua modules. The implementations load in setup; the Kubernetes client on
 * the first k8s call, so neither `runner --help` nor a run without k8s loads it.
 */
export const plugin = defineLuaModulePlugin({
  id: 'modules-kubernetes',
  version: '0.1.0',
  description: 'Lua modules k8s and helm: apply, get, delete, rollout status, logs; charts',
  dependsOn,
  modules: [
    offerLuaModule<keyof typeof k8sModule.functions, Deps>(k8sModule, async ({ templates }) => {
      const { createK8sModule } = await import('./src/k8s.js');
      const render = templates
        ? (source: string, context: Record<string, unknown>, syntax: 'jinja' | 'go') =>
            templates.render(source, context, { syntax, name: 'k8s.apply manifest' })
        : undefined;
      return createK8sModule({ render });
    }),
    offerLuaModule<keyof typeof helmModule.functions, Deps>(helmModule, async () =>
      (await import('./src/helm.js')).createHelmModule(),
    ),
  ],
});
