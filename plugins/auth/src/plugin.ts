import { ClusterRef, definePlugin, hasTable, HttpRouterRef, optional, StoreRef } from '@runner/plugin-sdk';
import { AUTH_COMMAND_OPTIONS, AUTH_COMMANDS } from './commands.js';
import { AUTH_CONFIG, readAuthConfig } from './config.js';
import { routes } from './api.js';

export const plugin = definePlugin({
  id: 'auth',
  version: '0.1.0',
  routes,
  description:
    'Authentication (Basic, session tokens, API tokens, the local credential), roles and the audit log of the master',
  profiles: ['master'],
  dependsOn: { router: HttpRouterRef, store: StoreRef, cluster: optional(ClusterRef) },
  async schema() {
    const [{ ACCOUNT_MIGRATIONS }, { AUDIT_MIGRATIONS }] = await Promise.all([
      import('./accounts.js'),
      import('./audit-log.js'),
    ]);
    return [
      { owner: 'auth', migrations: ACCOUNT_MIGRATIONS },
      { owner: 'audit', migrations: AUDIT_MIGRATIONS },
    ];
  },
  commands: AUTH_COMMANDS,
  commandOptions: AUTH_COMMAND_OPTIONS,
  config: AUTH_CONFIG,
  // What the service registers (authRetentionPolicies), for `runner db stats` without a master;
  // none in a store a master never used. Accounts are not opened: reports read the tables.
  async retention(store, config) {
    if (!(await hasTable(store, 'audit_log')) || !(await hasTable(store, 'auth_revoked'))) return [];
    const [{ authRetentionPolicies }, { Accounts }] = await Promise.all([
      import('./audit-retention.js'),
      import('./accounts.js'),
    ]);
    return authRetentionPolicies(store, readAuthConfig(config).auditRetention, new Accounts(store));
  },
  // First start hashes the admin's password (scrypt) and may wait on the store.
  setupTimeoutMs: 30_000,
  async setup(ctx, { router, store, cluster }) {
    const config = readAuthConfig(ctx.config);
    // Loaded here, not at import: `runner --help` imports every plugin's entry.
    const { startAuth } = await import('./service.js');
    const service = await startAuth({
      config,
      router,
      store,
      logger: ctx.logger,
      dataDir: ctx.config.dataDir,
      redactor: ctx.redactor,
      events: ctx.events,
      corsOrigins: ctx.config.get<string[]>('http.cors_origins', []),
      cluster,
    });
    return { stop: () => service.close() };
  },
});
