import { describe, expect, it } from 'vitest';
import { luaLazyTable } from '@runner/plugin-sdk';
import { testRuntime } from './test-support.js';

describe('lazy tables', () => {
  it('converts an entry when the script reads it, keeps it, and iterates all with pairs', async () => {
    const { values: run } = testRuntime();
    let reads = 0;
    const source = {
      get build() {
        reads++;
        return { outputs: { artifact: 'web.tgz' } };
      },
      ship: { status: 'succeeded' },
    };
    const values = await run(
      `local a = tasks.build.outputs.artifact
       local again = tasks.build.outputs.artifact
       local names = {}
       for k in pairs(tasks) do names[#names + 1] = k end
       table.sort(names)
       return a, again, table.concat(names, ","), tasks.missing == nil, tasks[1] == nil`,
      { globals: { tasks: luaLazyTable(source) } },
    );
    expect(values).toEqual(['web.tgz', 'web.tgz', 'build,ship', true, true]);
    expect(reads).toBe(1);
  });

  it('reports a value that cannot be converted as a Lua error naming its path', async () => {
    const { run } = testRuntime();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(run('return tasks.loop.self', { globals: { tasks: luaLazyTable({ loop: cyclic }) } })).rejects.toThrow(
      /tasks\.loop.*cycle/,
    );
  });
});
