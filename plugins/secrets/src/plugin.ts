import {
  definePlugin,
  FlowsRef,
  HttpRouterRef,
  optional,
  SecretsRef,
  StoreRef,
  WebSocketHubRef,
  type ConfigDeclaration,
} from '@runner/plugin-sdk';
import { routes } from './api.js';
import { secretCommand } from './commands.js';

const SECRETS_CONFIG: ConfigDeclaration = {
  'secrets.key_file': {
    schema: { type: 'string', minLength: 1 },
    help: 'file holding the secrets key (base64 of 32 bytes; default <data-dir>/secrets/master.key, made 0600 on first use). Give every master of one store the same key',
  },
  'secrets.key_env': {
    schema: { type: 'string', minLength: 1, pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
    help: 'name of an environment variable holding the secrets key (base64 of 32 bytes) instead of a file; rotate-key is then refused',
  },
};

/**
 * Secrets: values sealed with AES-256-GCM under a key kept apart from the store, served to master
 * code through SecretsRef (stacks read a run's values, SSH profiles their credentials) and named,
 * never shown, at /api/v1/secrets.
 */
export const plugin = definePlugin({
  id: 'secrets',
  version: '0.1.0',
  routes,
  description: 'Secrets: values per stack sealed at rest (AES-256-GCM), names only in the API, UI and CLI',
  profiles: ['master'],
  provides: [SecretsRef],
  config: SECRETS_CONFIG,
  dependsOn: {
    store: StoreRef,
    router: optional(HttpRouterRef),
    hub: optional(WebSocketHubRef),
    flows: optional(FlowsRef),
  },
  async schema() {
    const { SECRET_MIGRATIONS } = await import('./secret-store.js');
    return [{ owner: 'secrets', migrations: SECRET_MIGRATIONS }];
  },
  commands: [secretCommand],
  async setup(ctx, { store, router, hub, flows }) {
    const [{ SecretStore }, { KeySource, defaultKeyFile }, { registerSecretRoutes }] = await Promise.all([
      import('./secret-store.js'),
      import('./key-source.js'),
      import('./routes.js'),
    ]);
    const keys = new KeySource({
      file: ctx.config.get<string | undefined>('secrets.key_file', undefined) ?? defaultKeyFile(ctx.config.dataDir),
      env: ctx.config.get<string | undefined>('secrets.key_env', undefined),
    });
    const secrets = new SecretStore(store, keys);
    const opened = await secrets.open();
    if (opened.settled)
      ctx.logger.warn(`a key rotation interrupted by a stop was ${opened.settled} (the secrets open under one key)`);
    // Said at start, not only when a run first needs a value: a restore without its key.
    if (opened.problem) ctx.logger.error(opened.problem, { unreadable_secrets: opened.unreadable });
    ctx.provide(SecretsRef, secrets);
    if (router)
      registerSecretRoutes(router, secrets, {
        flows,
        // Open pages reload the names (no value travels).
        onChange: (stack, name) => hub?.broadcast('secret_update', { stack, name }),
      });
  },
});
