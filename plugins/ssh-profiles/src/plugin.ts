import {
  definePlugin,
  ExecutorCallServerRef,
  HttpRouterRef,
  LuaModulesRef,
  MasterCallForwarderRef,
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
 * /api/v1/ssh, `runner ssh ...`, and the Lua `ssh` module of the master's and `runner run`'s scripts,
 * which also serves the calls of the master's local executor (executorPlugin below). Credentials stay
 * in the secrets service (scope `ssh-profile:<name>`) or a key file on the master.
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
    // ssh.* of the scripts the master's local executor runs, forwarded here (engine plugin).
    executorCalls: optional(ExecutorCallServerRef),
  },
  async schema() {
    const { SSH_MIGRATIONS } = await import('./profile-store.js');
    return [{ owner: 'ssh-profiles', migrations: SSH_MIGRATIONS }];
  },
  commands: [sshCommand],
  async setup(ctx, { store, router, secrets, lua, executorCalls }) {
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
      const { createSshModule, profileActions } = await import('./lua.js');
      lua.provide(sshModule, createSshModule(profileActions(profiles)));
    }
    if (executorCalls) {
      const { serveForwardedSsh, SSH_MODULE } = await import('./forwarded-ssh.js');
      executorCalls.serve(SSH_MODULE, serveForwardedSsh(profiles));
    }
  },
});

/**
 * The Lua `ssh` module in the master's local executor (profile `executor`), which has no store and
 * no credentials: each call is forwarded to the master, which performs it with the profile
 * (forwarded-ssh.ts). The module is declared once, by the plugin above (`runner modules` lists it
 * once); this one only provides it where that one does not load.
 */
export const executorPlugin = definePlugin({
  id: 'ssh-profiles-executor',
  version: '0.1.0',
  description: "The Lua ssh module of a master's local executor: each call is performed by the master",
  profiles: ['executor'],
  dependsOn: { lua: LuaModulesRef, forwarder: MasterCallForwarderRef },
  async setup(_ctx, { lua, forwarder }) {
    const [{ createSshModule }, { forwardedActions }] = await Promise.all([
      import('./lua.js'),
      import('./forwarded-ssh.js'),
    ]);
    lua.provide(sshModule, createSshModule(forwardedActions(forwarder)));
  },
});
