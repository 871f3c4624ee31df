import { defineLuaModulePlugin, offerLuaModule } from '@runner/plugin-sdk';
import { awsModule } from './src/aws-spec.js';
import { azureModule } from './src/azure-spec.js';
import { gcpModule } from './src/gcp-spec.js';

export { awsModule } from './src/aws-spec.js';
export { azureModule } from './src/azure-spec.js';
export { gcpModule } from './src/gcp-spec.js';

/**
 * The `aws`, `gcp` and `azure` Lua modules. Implementations load in setup; each provider's SDK
 * (tens of megabytes) on its module's first call.
 */
export const plugin = defineLuaModulePlugin({
  id: 'modules-cloud',
  version: '0.1.0',
  description: 'Lua modules aws, gcp and azure: storage and compute basics',
  modules: [
    offerLuaModule(awsModule, async () => (await import('./src/aws.js')).createAwsModule()),
    offerLuaModule(gcpModule, async () => (await import('./src/gcp.js')).createGcpModule()),
    offerLuaModule(azureModule, async () => (await import('./src/azure.js')).createAzureModule()),
  ],
});
