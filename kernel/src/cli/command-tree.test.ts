import { describe, expect, it } from 'vitest';
import { mergeCommands } from './command-tree.js';

describe('planned commands', () => {
  const planned = { name: 'hook', description: 'hooks', planned: 'hooks that start workflows on events' };
  const real = {
    name: 'hook',
    description: 'hooks on events',
    subcommands: [{ name: 'list', description: 'x', run: () => 0 }],
  };

  it('give way to the plugin that contributes the command, whichever comes first', () => {
    for (const order of [
      [planned, real],
      [real, planned],
    ]) {
      const tree = mergeCommands(order.map((spec, i) => ({ spec, pluginId: `p${i}` })));
      expect(tree).toHaveLength(1);
      expect(tree[0]).toMatchObject({ name: 'hook', description: 'hooks on events' });
      expect(tree[0].planned).toBeUndefined();
      expect(tree[0].subcommands?.map((c) => c.name)).toEqual(['list']);
    }
  });

  it('stay planned while no plugin builds them', () => {
    const tree = mergeCommands([{ spec: planned, pluginId: 'cli-tools' }]);
    expect(tree[0].planned).toBe('hooks that start workflows on events');
  });
});
