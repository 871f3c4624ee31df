// Flow versions, diff, restore, the 409 of a stale save, search, and export/import conflicts, on
// the embedded store and on PostgreSQL. The validator here refuses YAML containing "BROKEN" (the
// engine's real validation is exercised by test/e2e/flows.test.ts).
import { ConflictError, InvalidInputError, type Store } from '@runner/plugin-sdk';
import { storeBackends, type OpenBackend } from '@runner/plugin-store/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlowStore } from './flow-store.js';

const yaml = (task: string) => `version: "1.0"\ntasks:\n  - name: ${task}\n    exec:\n      script: return true\n`;
const validate = async (_name: string, text: string) => {
  if (text.includes('BROKEN')) throw new InvalidInputError('BROKEN.yaml:1:1: broken');
};

for (const backend of storeBackends('flow_store')) {
  describe.skipIf(!backend.available)(`FlowStore on ${backend.name}`, () => {
    let opened: OpenBackend;
    let store: Store;
    let flows: FlowStore;

    beforeAll(async () => {
      opened = await backend.open();
      store = opened.store;
      flows = new FlowStore(store, validate);
      await flows.open();
    });
    afterAll(async () => {
      await opened?.close();
      backend.cleanup();
    });

    it('numbers a version per change of the YAML, diffs and restores them', async () => {
      await flows.create({ name: 'deploy', yaml: yaml('one'), tags: ['Prod', 'web'], description: 'ships it' }, 'ann');
      const same = await flows.update('deploy', { yaml: yaml('one'), description: 'ships the site' }, 'bob');
      expect(same).toMatchObject({ version: 1, description: 'ships the site', tags: ['prod', 'web'] });
      await flows.update('deploy', { yaml: yaml('two'), base_version: 1, message: 'rename' }, 'bob');

      const { versions } = await flows.versions('deploy');
      expect(versions.map((v) => [v.version, v.author, v.message])).toEqual([
        [2, 'bob', 'rename'],
        [1, 'ann', 'created'],
      ]);
      const diff = await flows.diff('deploy', 1, 2);
      expect(diff.lines.filter((l) => l.kind !== 'same')).toEqual([
        { kind: 'removed', old: 3, text: '  - name: one' },
        { kind: 'added', new: 3, text: '  - name: two' },
      ]);
      expect(diff.unified).toContain('-  - name: one\n+  - name: two');

      const restored = await flows.restore('deploy', 1, 'cy');
      expect(restored).toMatchObject({ version: 3, yaml: yaml('one') });
      expect((await flows.version('deploy', 3)).message).toBe('restored version 1');
      await expect(flows.update('deploy', { yaml: 'BROKEN' }, 'cy')).rejects.toThrow('BROKEN.yaml:1:1');
      await expect(flows.version('deploy', 9)).rejects.toThrow('flow "deploy" has no version 9 (versions 1 to 3)');
    });

    it('refuses a save over a newer version with what changed, and writes nothing', async () => {
      await flows.create({ name: 'stale', yaml: yaml('a') }, 'ann');
      await flows.update('stale', { yaml: yaml('b'), base_version: 1, message: 'mine' }, 'bob');
      const refused = await flows.update('stale', { yaml: yaml('c'), base_version: 1 }, 'cy').catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ConflictError);
      const error = refused as ConflictError;
      expect(error.message).toBe(
        'flow "stale" changed since version 1 (now 2: 2 by bob); reload it and apply your change again',
      );
      expect(error.details).toMatchObject({
        base_version: 1,
        current_version: 2,
        versions: [{ version: 2, message: 'mine' }],
      });
      expect(String(error.details?.diff)).toContain('+  - name: b');
      expect((await flows.require('stale')).version).toBe(2);
    });

    it('lets one of two saves from the same version win when they race', async () => {
      await flows.create({ name: 'race', yaml: yaml('a') }, 'ann');
      const results = await Promise.allSettled(
        ['x', 'y'].map((t) => flows.update('race', { yaml: yaml(t), base_version: 1 }, t)),
      );
      expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect((await flows.versions('race')).total).toBe(2);
    });

    it('searches by name, description and tag', async () => {
      await flows.create({ name: 'backup-db', yaml: yaml('b'), tags: ['db'], description: 'Nightly dump' }, 'ann');
      const names = async (filter: Parameters<FlowStore['list']>[0]) =>
        (await flows.list(filter)).flows.map((f) => f.name);
      expect(await names({ search: 'BACKUP' })).toEqual(['backup-db']);
      expect(await names({ search: 'nightly' })).toEqual(['backup-db']);
      expect(await names({ tag: 'web' })).toEqual(['deploy']);
      expect(await names({ search: 'db' })).toEqual(['backup-db']);
      expect(await names({ search: '%' })).toEqual([]);
    });

    it('exports with history and imports back byte for byte; conflicts refuse the whole file', async () => {
      const crlf =
        'version: "1.0"\r\ntasks:\r\n  - name: keep   # trailing spaces  \r\n    exec:\r\n      script: return true\r\n';
      await flows.create({ name: 'odd', yaml: crlf, concurrency: { limit: 2, behavior: 'queue' } }, 'ann');
      const document = await flows.exportFlows(['deploy', 'odd'], true);
      expect(document.flows[0]?.versions?.length).toBe(3);

      const conflict = await flows.importFlows(document, 'eve').catch((e: unknown) => e);
      expect(conflict).toBeInstanceOf(ConflictError);
      expect((conflict as ConflictError).details?.conflicts).toEqual([
        { name: 'deploy', reason: 'a flow of that name exists' },
        { name: 'odd', reason: 'a flow of that name exists' },
      ]);

      // One new name and one taken: nothing is imported, not even the new one.
      const mixed = { ...document, flows: [{ ...document.flows[1]!, name: 'fresh' }, document.flows[0]!] };
      await expect(flows.importFlows(mixed, 'eve')).rejects.toThrow('nothing imported: deploy');
      expect(await flows.get('fresh')).toBeUndefined();

      await flows.remove('deploy');
      await flows.remove('odd');
      expect(await flows.importFlows(document, 'eve')).toEqual({ imported: ['deploy', 'odd'] });
      const again = await flows.exportFlows(['deploy', 'odd'], true);
      expect(again.flows).toEqual(document.flows);
      expect((await flows.require('odd')).yaml).toBe(crlf);
    });
  });
}
