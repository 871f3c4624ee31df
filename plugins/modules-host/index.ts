import {
  defineLuaModulePlugin,
  offerLuaModule,
  optional,
  ProcessGroupsRef,
  TemplateEngineRef,
} from '@runner/plugin-sdk';
import { archiveModule } from './src/archive/spec.js';
import { cronModule } from './src/cron/spec.js';
import { firewallModule } from './src/firewall/spec.js';
import { hostsModule } from './src/hosts/spec.js';
import { mountModule } from './src/mount/spec.js';
import { processModule } from './src/process/spec.js';
import { sysctlModule } from './src/sysctl/spec.js';
import { waitForModule } from './src/wait-for/spec.js';
import { execModule } from './src/exec/spec.js';
import { factsModule } from './src/facts/spec.js';
import { fileModule } from './src/file/spec.js';
import { gitModule } from './src/git/spec.js';
import { infraTestModule } from './src/infra-test/spec.js';
import { pkgModule } from './src/pkg/spec.js';
import { systemdModule } from './src/systemd/spec.js';
import { userModule } from './src/user/spec.js';

export {
  archiveModule,
  cronModule,
  firewallModule,
  hostsModule,
  mountModule,
  processModule,
  sysctlModule,
  waitForModule,
  execModule,
  factsModule,
  fileModule,
  gitModule,
  infraTestModule,
  pkgModule,
  systemdModule,
  userModule,
};

// Optional: without the template plugin every function but file.template still works.
const dependsOn = { templates: optional(TemplateEngineRef) };
type Deps = typeof dependsOn;

/**
 * Lua modules acting on the machine a task runs on. Each implementation loads in setup, so that
 * `runner --help` (which imports every plugin's entry) reads declarations only.
 */
export const plugin = defineLuaModulePlugin({
  id: 'modules-host',
  version: '0.1.0',
  description:
    'Lua modules acting on the host: commands, files, archives, facts, packages, users, services, git, assertions, cron, hosts, sysctl, mounts, firewall, waits, processes',
  provides: [ProcessGroupsRef],
  dependsOn,
  modules: [
    offerLuaModule<keyof typeof execModule.functions, Deps>(execModule, async (_deps, ctx) => {
      const [{ createExecModule }, { HelperLauncher }, { ProcessGroupWatch }] = await Promise.all([
        import('./src/exec/run.js'),
        import('./src/exec/launcher.js'),
        import('./src/exec/process-groups.js'),
      ]);
      // The helper process starts on the first exec.run, not here: most boots never run a command.
      const launcher = new HelperLauncher((problem) =>
        ctx.logger.warn(`exec: ${problem}; starting processes directly (slower in a large process)`),
      );
      const groups = new ProcessGroupWatch();
      ctx.provide(ProcessGroupsRef, groups);
      ctx.onStop(() => launcher.close());
      return createExecModule(launcher, groups);
    }),
    offerLuaModule<keyof typeof fileModule.functions, Deps>(fileModule, async ({ templates }) => {
      const { createFileModule } = await import('./src/file/files.js');
      return createFileModule(templates);
    }),
    offerLuaModule<keyof typeof factsModule.functions, Deps>(factsModule, async () => {
      // systeminformation loads on the first read.
      const { createFactsModule } = await import('./src/facts/facts.js');
      return createFactsModule();
    }),
    offerLuaModule(pkgModule, async () => (await import('./src/pkg/pkg.js')).createPkgModule()),
    offerLuaModule(userModule, async () => (await import('./src/user/user.js')).createUserModule()),
    offerLuaModule(systemdModule, async () => (await import('./src/systemd/systemd.js')).createSystemdModule()),
    offerLuaModule(gitModule, async () => (await import('./src/git/git.js')).createGitModule()),
    offerLuaModule(infraTestModule, async () =>
      (await import('./src/infra-test/infra-test.js')).createInfraTestModule(),
    ),
    offerLuaModule(archiveModule, async () => (await import('./src/archive/archive.js')).createArchiveModule()),
    offerLuaModule(cronModule, async () => (await import('./src/cron/cron.js')).createCronModule()),
    offerLuaModule(firewallModule, async () => (await import('./src/firewall/firewall.js')).createFirewallModule()),
    offerLuaModule(hostsModule, async () => (await import('./src/hosts/hosts.js')).createHostsModule()),
    offerLuaModule(mountModule, async () => (await import('./src/mount/mount.js')).createMountModule()),
    offerLuaModule(processModule, async () => (await import('./src/process/process.js')).createProcessModule()),
    offerLuaModule(sysctlModule, async () => (await import('./src/sysctl/sysctl.js')).createSysctlModule()),
    offerLuaModule(waitForModule, async () => (await import('./src/wait-for/wait-for.js')).createWaitForModule()),
  ],
});
