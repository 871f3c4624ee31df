import type { Component } from 'svelte';
import LatestEvents from './hooks/LatestEvents.svelte';

/**
 * The registry the dashboard's panels beneath its counts are drawn from, in order: each a
 * feature's own component, which reads its own API, shown only to a role with the permission that
 * API needs (the master would answer 403). A feature adds its panel here, as it adds its page to
 * the nav; its counts are tiles the master lists (`DashboardTilesRef`).
 */
export interface DashboardPanel {
  id: string;
  permission: string;
  component: Component;
}

export const DASHBOARD_PANELS: DashboardPanel[] = [
  { id: 'latest-events', permission: 'event:view', component: LatestEvents },
];
