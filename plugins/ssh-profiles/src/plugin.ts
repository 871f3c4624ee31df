import {
  definePlugin,
  HttpRouterRef,
  LuaModulesRef,
  optional,
  SecretsRef,
  SshClientRef,
  SshProfilesRef,
  StoreRef,
} from '@runner/plugin-sdk';
import { routes } from './api.js';
import { sshCommand } from './commands.js';
import { sshModule } from './spec.js';

/**
 * The shared SSH client (SshClientRef) and stored SSH profiles (SshProfilesRef): served at
 * /api/v1/ssh, `runner ssh ...`, and the Lua `ssh` module of the master's and `runner run`'s scripts.
 * Credentials stay in the secrets service (scope `ssh-profile:<name>`) or a key file on the master.
 */
export const plugin = definePlugin({
  id: 'ssh-profiles',
  version: '0.1.0',
  routes,
  description:
    'SSH profiles: the shared SSH client, profiles with a pinned host key and an audit log, the Lua ssh module',
  profiles: ['master', 'embedded'],
  luaModules: [sshModule],
  provides: [SshClientRef, SshProfilesRef],
  dependsOn: {
    store: StoreRef,
    router: optional(HttpRouterRef),
    secrets: optional(SecretsRef),
    lua: optional(LuaModulesRef),
  },
  async schema() {
    const { SSH_MIGRATIONS } = await import('./profile-store.js');
    return [{ owner: 'ssh-profiles', migrations: SSH_MIGRATIONS }];
  },
  commands: [sshCommand],
  async setup(ctx, { store, router, secrets, lua }) {
    const [{ Ssh2Client }, { ProfileStore }, { SshProfilesService }] = await Promise.all([
      import('./client.js'),
      import('./profile-store.js'),
      import('./profiles.js'),
    ]);
    const client = new Ssh2Client();
    const profileStore = new ProfileStore(store);
    await profileStore.open();
    const profiles = new SshProfilesService(profileStore, client, secrets, ctx.redactor);
    ctx.provide(SshClientRef, client);
    ctx.provide(SshProfilesRef, profiles);
    if (router) {
      const { registerSshRoutes } = await import('./routes.js');
      registerSshRoutes(router, profiles, profileStore);
    }
    if (lua) {
      const { createSshModule } = await import('./lua.js');
      lua.provide(sshModule, createSshModule(profiles));
    }
  },
});
