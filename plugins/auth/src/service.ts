import type { Cluster, EventBus, HttpRouter, Logger, Redactor, Store } from '@runner/plugin-sdk';
import { KnownSecrets } from './known-secrets.js';
import { auditAgentEvents } from './audit-events.js';
import { Accounts } from './accounts.js';
import { registerAdminRoutes } from './admin-routes.js';
import { AuditLog } from './audit-log.js';
import { authRetentionPolicies } from './audit-retention.js';
import { Authenticator } from './authenticator.js';
import { ensureAdmin, jwtSecret, writeLocalToken } from './bootstrap.js';
import type { AuthConfig } from './config.js';
import { authGuards } from './guards.js';
import { LoginThrottle } from './login-throttle.js';
import { PasswordPolicy } from './password-policy.js';
import { OidcLogins } from './oidc.js';
import { registerOidcRoutes, registerProvidersRoute } from './oidc-routes.js';
import { registerPasswordRoute } from './password-route.js';
import { registerSessionRoutes } from './session-routes.js';
import { shareAccounts } from './shared-accounts.js';

export interface AuthServiceOptions {
  config: AuthConfig;
  router: HttpRouter;
  store: Store;
  logger: Logger;
  dataDir: string;
  /** Learns the secrets this plugin holds (the JWT key, the local credential, the admin's password). */
  redactor: Redactor;
  /** Enrolments and join-token rotations reach the audit log from here. */
  events: EventBus;
  /** Origins besides the master's own allowed to send changes (http.cors_origins). */
  corsOrigins: readonly string[];
  /** Other masters sharing the store: account changes reach their copies (shared-accounts.ts). */
  cluster?: Cluster;
}

export interface AuthService {
  accounts: Accounts;
  authenticator: Authenticator;
  audit: AuditLog;
  close(): Promise<void>;
}

/** Opens the tables, makes sure an admin and the credentials files exist, adds guards and routes. */
export async function startAuth(options: AuthServiceOptions): Promise<AuthService> {
  const { config, router, store, logger, dataDir, redactor, cluster } = options;
  let reload = async () => undefined as void;
  const shared = cluster?.shared ? shareAccounts(store, cluster, () => reload(), logger) : undefined;
  const accounts = new Accounts(
    shared?.store ?? store,
    new PasswordPolicy(config.passwordRules),
    new KnownSecrets(redactor),
  );
  reload = () => accounts.reload();
  await accounts.open(Math.floor(Date.now() / 1000));
  const audit = new AuditLog(store, logger);
  await audit.open();
  await ensureAdmin(accounts, config, dataDir, logger, { audit, redactor });
  const authenticator = new Authenticator(
    accounts,
    await jwtSecret(config, dataDir, redactor),
    await writeLocalToken(dataDir, redactor),
    new LoginThrottle(config.failuresBeforeDelay),
    config.jwtExpiryMs,
    Date.now,
    config.ldap,
    options.corsOrigins,
  );
  const unsubscribe = auditAgentEvents(options.events, audit);
  // Pruned by the store in the background (store.retention_interval); runner db stats shows them.
  const unretain = authRetentionPolicies(store, config.auditRetention, accounts).map((policy) => store.retain(policy));
  for (const guard of authGuards({ enabled: config.enabled, authenticator, audit })) router.guard(guard);
  const deps = { accounts, authenticator, audit };
  registerSessionRoutes(router, deps);
  registerPasswordRoute(router, deps);
  registerAdminRoutes(router, deps);
  registerProvidersRoute(router, config.oidc);
  // Served with no provider configured too (each answers 404 naming the provider): a master serves
  // every route its plugins declare, so its OpenAPI document is the one the build writes.
  registerOidcRoutes(router, new OidcLogins(config.oidc, accounts), deps);
  if (!config.enabled) {
    logger.warn('authentication is OFF (--auth off): every caller of the REST API and WebSocket acts as admin');
  }
  return {
    accounts,
    authenticator,
    audit,
    close: async () => {
      shared?.stop();
      unsubscribe();
      for (const remove of unretain) remove();
      await audit.close();
    },
  };
}
