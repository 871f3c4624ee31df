import { createServiceRef } from './service-ref.js';

/**
 * One count on the dashboard, contributed by the plugin that owns the feature (saved workflows,
 * hooks, events), so that the dashboard plugin and the UI's dashboard page know no feature: the
 * page draws every tile `GET /dashboard` lists, in `order`, each opening its `href`.
 */
export interface DashboardTile {
  /** Stable and kebab-case (`workflows`); the UI's tests and links find the tile by it. */
  id: string;
  /** What the number counts, for people: `Workflows`. */
  title: string;
  /** The UI page the tile opens (`/flows`). */
  href: string;
  /** The permission a caller needs to see the tile: the permission of the routes behind `href`. */
  permission: string;
  /** Lower first; the dashboard's own agents and executions tiles are 10 and 20. */
  order: number;
  /**
   * Read at every `GET /dashboard` (the page polls it): answer from an index or a cache, never a
   * scan. `detail` is a short second line (`3 active`).
   */
  read(): Promise<{ value: number; detail?: string }>;
}

/** The dashboard's contributions (provided by the dashboard plugin). */
export interface DashboardTiles {
  /** Adds a tile; the function it returns removes it. A second tile with one id is refused. */
  contribute(tile: DashboardTile): () => void;
}

export const DashboardTilesRef = createServiceRef<DashboardTiles>({
  id: 'dashboard.tiles',
  description: "the dashboard's counts contributed by feature plugins (dashboard plugin)",
});
