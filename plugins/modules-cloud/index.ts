import { definePlugin, LuaModulesRef } from '@runner/plugin-sdk';
import { awsModule } from './src/aws-spec.js';
import { azureModule } from './src/azure-spec.js';
import { gcpModule } from './src/gcp-spec.js';

export { awsModule } from './src/aws-spec.js';
export { azureModule } from './src/azure-spec.js';
export { gcpModule } from './src/gcp-spec.js';

/** The `aws`, `gcp` and `azure` Lua modules. Implementations load in setup, each SDK on its first call. */
export const plugin = definePlugin({
  id: 'modules-cloud',
  version: '0.1.0',
  description: 'Lua modules for cloud providers: aws, gcp, azure',
  luaModules: [awsModule, gcpModule, azureModule],
  dependsOn: { lua: LuaModulesRef },
  async setup(_ctx, { lua }) {
    const [{ createAwsModule }, { createGcpModule }, { createAzureModule }] = await Promise.all([
      import('./src/aws.js'),
      import('./src/gcp.js'),
      import('./src/azure.js'),
    ]);
    lua.provide(awsModule, createAwsModule());
    lua.provide(gcpModule, createGcpModule());
    lua.provide(azureModule, createAzureModule());
  },
});
