import { definePlugin, LuaModulesRef } from '@runner/plugin-sdk';
import { awsModule } from './src/aws-spec.js';

export { awsModule } from './src/aws-spec.js';

/** The `aws` Lua module. Its implementation loads in setup and each SDK client on its first call. */
export const plugin = definePlugin({
  id: 'modules-cloud',
  version: '0.1.0',
  description: 'Lua modules for cloud providers: aws',
  luaModules: [awsModule],
  dependsOn: { lua: LuaModulesRef },
  async setup(_ctx, { lua }) {
    const { createAwsModule } = await import('./src/aws.js');
    lua.provide(awsModule, createAwsModule() as never);
  },
});
