import { principalFor, type DashboardTile } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { TileBoard } from './tiles.js';

const tile = (id: string, order: number, read: DashboardTile['read'], permission = 'workflow:view'): DashboardTile => ({
  id,
  title: id,
  href: `/${id}`,
  permission,
  order,
  read,
});

const viewer = principalFor({ id: 'u1', name: 'vera', role: 'viewer', method: 'jwt' });
const admin = principalFor({ id: 'u2', name: 'ada', role: 'admin', method: 'jwt' });

describe('TileBoard', () => {
  it("lists the caller's tiles in order, each read at once, a failing or hanging one costing only its tile", async () => {
    const board = new TileBoard();
    const started: string[] = [];
    board.contribute(tile('hooks', 30, async () => ({ value: 3, detail: '2 enabled' })));
    board.contribute(
      tile('broken', 25, async () => {
        started.push('broken');
        throw new Error('index unavailable');
      }),
    );
    board.contribute(
      tile('stuck', 26, () => {
        started.push('stuck');
        return new Promise(() => undefined);
      }),
    );
    board.contribute(tile('secrets', 5, async () => ({ value: 7 }), 'secret:manage'));
    board.contribute(tile('flows', 20, async () => ({ value: 12 })));

    const seen = await board.read(viewer, 50);
    // Both slow and failing tiles were started before either answered: read in parallel.
    expect(started).toEqual(['broken', 'stuck']);
    expect(seen).toEqual([
      { id: 'flows', title: 'flows', href: '/flows', order: 20, value: 12 },
      { id: 'broken', title: 'broken', href: '/broken', order: 25, error: 'index unavailable' },
      { id: 'stuck', title: 'stuck', href: '/stuck', order: 26, error: 'not read within 0.05 s' },
      { id: 'hooks', title: 'hooks', href: '/hooks', order: 30, value: 3, detail: '2 enabled' },
    ]);
    // A viewer does not hold secret:manage; an admin does, and sees that tile first.
    expect((await board.read(admin, 50)).map((t) => t.id)).toEqual(['secrets', 'flows', 'broken', 'stuck', 'hooks']);
  });

  it('refuses a second tile with one id, and forgets a tile its plugin removes', async () => {
    const board = new TileBoard();
    const remove = board.contribute(tile('flows', 20, async () => ({ value: 1 })));
    expect(() => board.contribute(tile('flows', 21, async () => ({ value: 2 })))).toThrow(/contributed already/);
    remove();
    expect(await board.read(undefined)).toEqual([]);
  });
});
