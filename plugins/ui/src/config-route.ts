import { configRows } from '@runner/plugin-cli-tools/config-rows';
import { defineRoute, Permissions, type HttpRouter, type PluginContext } from '@runner/plugin-sdk';
import { Type } from '@runner/plugin-sdk/schema';

/**
 * `GET /api/v1/config`: the effective configuration as `runner config show` prints it (one
 * implementation: cli-tools' configRows), secrets redacted, each value with its source. Read-only:
 * the settings page shows it, changes go through config.yaml, the environment or flags.
 */
export function registerConfigRoute(router: HttpRouter, ctx: Pick<PluginContext, 'config' | 'redactor'>): void {
  router.add(
    defineRoute({
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
              value: Type.Unknown({ description: 'the effective value; [redacted] for a secret that is set' }),
              source: Type.String({ description: 'default, the config file, an environment variable or a flag' }),
              plugin: Type.String(),
              help: Type.String(),
              secret: Type.Boolean(),
            }),
          ),
        }),
      },
      handler: () => ({ data_dir: ctx.config.dataDir, keys: configRows(ctx) }),
    }),
  );
}
