import * as api from './api.js';
import { configRows, serve, type HttpRouter, type PluginContext } from '@runner/plugin-sdk';

/**
 * `GET /api/v1/config`: the effective configuration as `runner config show` prints it (one
 * implementation: the SDK's configRows), secrets redacted, each value with its source. Read-only:
 * the settings page shows it, changes go through config.yaml, the environment or flags.
 */
export function registerConfigRoute(router: HttpRouter, ctx: Pick<PluginContext, 'config' | 'redactor'>): void {
  router.add(serve(api.getConfig, () => ({ data_dir: ctx.config.dataDir, keys: configRows(ctx) })));
}
