import { defineLuaModulePlugin, offerLuaModule } from '@runner/plugin-sdk';
import { ansibleModule } from './src/ansible-spec.js';
import { terraformModule, tofuModule } from './src/terraform-spec.js';

export { ansibleModule } from './src/ansible-spec.js';
export { terraformModule, tofuModule } from './src/terraform-spec.js';

/** The `terraform`, `tofu` and `ansible` Lua modules, over the tools' command lines; implementations load in setup. */
export const plugin = defineLuaModulePlugin({
  id: 'modules-iac',
  version: '0.1.0',
  description: 'Lua modules terraform, tofu and ansible: plans, applies, outputs, playbooks',
  modules: [
    offerLuaModule(terraformModule, async () =>
      (await import('./src/terraform.js')).createTerraformModule('terraform'),
    ),
    offerLuaModule(tofuModule, async () => (await import('./src/terraform.js')).createTerraformModule('tofu')),
    offerLuaModule(ansibleModule, async () => (await import('./src/ansible.js')).createAnsibleModule()),
  ],
});
