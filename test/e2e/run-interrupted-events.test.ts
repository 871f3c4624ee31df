import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { definePlugin, WorkflowEngineRef, type BusEvent } from '@runner/plugin-sdk';
import { openStore } from '@runner/plugin-store';
import { describe, expect, it } from 'vitest';
import { bootKernel, discoverPlugins, kernelVersion, loadConfig } from '../../kernel/index.js';
import { RunLeases } from '../../plugins/engine/src/run-lifecycle.js';
import { RunStore } from '../../plugins/engine/src/run-store.js';
import { repoRoot } from './helpers.js';
import { quietLogger } from './workflow-helpers.js';

/**
 * The announcement of interrupted runs: an embedded kernel booted on a data directory where a run
 * of a dead process is still `running`; a plugin listening from its setup hears `workflow.failed`
 * with status `interrupted` once the kernel is ready, and the engine shows the run ended.
 */
describe('interrupted runs are announced at start', () => {
  it('emits workflow.failed with status interrupted to plugins that subscribed in their setup', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'runner-interrupted-events-'));
    const store = await openStore(dataDir, quietLogger());
    const runs = new RunStore(store);
    await runs.migrate();
    runs.useLeases(new RunLeases(store, 'pid 1 on gone (started 2026-01-01T00:00:00.000Z)', quietLogger()));
    await runs.insertRun({
      id: 'r-stale',
      workflowName: 'nightly',
      status: 'running',
      dryRun: false,
      startedAt: new Date(Date.now() - 60_000).toISOString(),
      duration: 0,
      counts: {},
    });
    await store.close();

    const heard: BusEvent[] = [];
    const listener = definePlugin({
      id: 'listener',
      version: '0.1.0',
      description: 'hears workflow.failed from its setup on',
      async setup(ctx) {
        ctx.events.on('workflow.failed', (event) => void heard.push(event));
      },
    });
    const plugins = [
      ...(await discoverPlugins({ builtinDir: join(repoRoot, 'plugins') })),
      {
        plugin: listener,
        descriptor: { id: 'listener', version: '0.1.0', description: '', source: '(test)', origin: 'builtin' as const },
      },
    ];
    const kernel = await bootKernel({
      profile: 'embedded',
      plugins,
      config: await loadConfig({ dataDir, env: {} }, plugins),
      logger: quietLogger(),
      kernelVersion,
    });
    try {
      expect(heard.map((e) => e.data)).toEqual([
        expect.objectContaining({ run_id: 'r-stale', workflow_name: 'nightly', status: 'interrupted' }),
      ]);
      expect(await kernel.get(WorkflowEngineRef).get('r-stale')).toMatchObject({
        status: 'interrupted',
        error: expect.stringMatching(/^interrupted: pid 1 on gone/),
      });
    } finally {
      await kernel.stop('test finished');
    }
  });
});
