// The REST routes this plugin serves, declared without handlers: the build writes the OpenAPI
// document and the UI client from them, the CLI builds commands from them (see RouteDeclaration).
import { Permissions, declareRoute } from '@runner/plugin-sdk';
import { Type } from '@runner/plugin-sdk/schema';

export const getConfig = declareRoute({
  method: 'GET',
  path: '/config',
  summary: 'The effective configuration: every declared key, its value (secrets redacted), source and help',
  tags: ['config'],
  permission: Permissions.configView,
  responses: {
    200: Type.Object({
      data_dir: Type.String(),
      keys: Type.Array(
        Type.Object({
          key: Type.String(),
          value: Type.Unknown({ description: 'the effective value; *** for a secret that is set' }),
          source: Type.String({ description: 'default, the config file, an environment variable or a flag' }),
          plugin: Type.String(),
          help: Type.String(),
          secret: Type.Boolean(),
        }),
      ),
    }),
  },
});

/** Every route above, for the plugin's definition. */
export const routes = [getConfig];
