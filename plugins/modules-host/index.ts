import {
  defineLuaModulePlugin,
  offerLuaModule,
  optional,
  ProcessGroupsRef,
  TemplateEngineRef,
} from '@runner/plugin-sdk';
import { execModule } from './src/exec/spec.js';
import { factsModule } from './src/facts/spec.js';
import { fileModule } from './src/file/spec.js';
import { gitModule } from './src/git/spec.js';
import { infraTestModule } from './src/infra-test/spec.js';
import { pkgModule } from './src/pkg/spec.js';
import { systemdModule } from './src/systemd/spec.js';
import { userModule } from './src/user/spec.js';

export { execModule, factsModule, fileModule, gitModule, infraTestModule, pkgModule, systemdModule, userModule };

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
  description: 'Lua modules acting on the host: commands, files, facts, packages, users, services, git, assertions',
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
  ],
});
