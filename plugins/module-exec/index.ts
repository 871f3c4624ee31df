import { definePlugin, LuaModulesRef, ProcessGroupsRef } from '@runner/plugin-sdk';
import { execModule } from './src/spec.js';

export { execModule } from './src/spec.js';

/** The `exec` Lua module. The implementation loads in setup so `runner --help` stays quick. */
export const plugin = definePlugin({
  id: 'module-exec',
  version: '0.1.0',
  description: 'Lua module exec: run commands and programs',
  luaModules: [execModule],
  provides: [ProcessGroupsRef],
  dependsOn: { lua: LuaModulesRef },
  async setup(ctx, { lua }) {
    const [{ createExecModule }, { HelperLauncher }, { ProcessGroupWatch }] = await Promise.all([
      import('./src/run.js'),
      import('./src/launcher.js'),
      import('./src/process-groups.js'),
    ]);
    // The helper process starts on the first exec.run, not here: most boots never run a command.
    const launcher = new HelperLauncher((problem) =>
      ctx.logger.warn(`exec: ${problem}; starting processes directly (slower in a large process)`),
    );
    const groups = new ProcessGroupWatch();
    ctx.provide(ProcessGroupsRef, groups);
    lua.provide(execModule, createExecModule(launcher, groups));
    return { stop: () => launcher.close() };
  },
});
