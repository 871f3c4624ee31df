import {
  messageOf,
  type DashboardTile,
  type DashboardTiles,
  type Permission,
  type Principal,
} from '@runner/plugin-sdk';

/** A tile as `GET /dashboard` lists it: its count, or why it could not be read. */
export interface TileReading {
  id: string;
  title: string;
  href: string;
  order: number;
  value?: number;
  detail?: string;
  /** The tile's read failed: the other tiles are still shown. */
  error?: string;
}

/**
 * The tiles feature plugins contribute (DashboardTilesRef), read for one caller: only those whose
 * permission the caller holds, all at once, a failing or slow one costing only its own tile.
 */
export class TileBoard implements DashboardTiles {
  private readonly tiles = new Map<string, DashboardTile>();

  contribute(tile: DashboardTile): () => void {
    if (this.tiles.has(tile.id)) throw new Error(`a dashboard tile "${tile.id}" is contributed already`);
    this.tiles.set(tile.id, tile);
    return () => {
      if (this.tiles.get(tile.id) === tile) this.tiles.delete(tile.id);
    };
  }

  /**
   * The caller's tiles in order, each read in parallel. Without a principal (no authentication
   * plugin installed: every route is open) every tile is shown.
   */
  read(principal: Principal | undefined, timeoutMs = READ_TIMEOUT_MS): Promise<TileReading[]> {
    const visible = [...this.tiles.values()]
      .filter((tile) => principal === undefined || principal.can(tile.permission as Permission))
      .sort((a, b) => a.order - b.order || a.id.localeCompare(b.id));
    return Promise.all(visible.map((tile) => readTile(tile, timeoutMs)));
  }
}

/** A tile's read may take this long before its tile says it could not be read (the page polls). */
const READ_TIMEOUT_MS = 5000;

async function readTile(tile: DashboardTile, timeoutMs: number): Promise<TileReading> {
  const { id, title, href, order } = tile;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not read within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    const { value, detail } = await Promise.race([Promise.resolve().then(() => tile.read()), late]);
    return { id, title, href, order, value, ...(detail === undefined ? {} : { detail }) };
  } catch (error) {
    return { id, title, href, order, error: messageOf(error) };
  } finally {
    clearTimeout(timer);
  }
}
