import { definePlugin, LuaModulesRef } from '@runner/plugin-sdk';
import { ansibleModule } from './src/ansible-spec.js';
import { terraformModule, tofuModule } from './src/terraform-spec.js';

export { ansibleModule } from './src/ansible-spec.js';
export { terraformModule, tofuModule } from './src/terraform-spec.js';

/** The `terraform`, `tofu` and `ansible` Lua modules; implementations load in setup. */
export const plugin = definePlugin({
  id: 'modules-iac',
  version: '0.1.0',
  description: 'Lua modules terraform, tofu and ansible',
  luaModules: [terraformModule, tofuModule, ansibleModule],
  dependsOn: { lua: LuaModulesRef },
  async setup(_ctx, { lua }) {
    const [{ createTerraformModule }, { createAnsibleModule }] = await Promise.all([
      import('./src/terraform.js'),
      import('./src/ansible.js'),
    ]);
    lua.provide(terraformModule, createTerraformModule('terraform'));
    lua.provide(tofuModule, createTerraformModule('tofu'));
    lua.provide(ansibleModule, createAnsibleModule());
  },
});
