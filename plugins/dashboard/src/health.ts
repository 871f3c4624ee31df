import type { WebSocketMessages } from '@runner/plugin-sdk';

export type SystemMetrics = WebSocketMessages['system_metrics'];

/** service.md section 8: the master's health thresholds, in percent. */
export interface HealthThresholds {
  cpu: number;
  memory: number;
  disk: number;
}

export type Resource = keyof HealthThresholds;

/** One `system_alert` message: a resource crossed its threshold (`firing`) or came back under it (`resolved`). */
export type SystemAlert = {
  resource: Resource;
  state: 'firing' | 'resolved';
  /** Percent now. */
  value: number;
  /** Percent. */
  threshold: number;
  message: string;
};

const USAGE: Record<Resource, (m: SystemMetrics) => number> = {
  cpu: (m) => m.cpu.usage_percent,
  memory: (m) => m.memory.used_percent,
  disk: (m) => m.disk.used_percent,
};

const LABEL: Record<Resource, string> = { cpu: 'CPU', memory: 'memory', disk: 'disk' };

/**
 * Tracks which resources are over their threshold and reports only the crossings: an alert when
 * a resource goes above, one when it comes back, nothing while it stays on one side (a banner,
 * not a message every 5 seconds).
 */
export class HealthWatch {
  private readonly firing = new Set<Resource>();

  constructor(private readonly thresholds: HealthThresholds) {}

  /** The resources over their threshold now, for a client that connects late. */
  active(metrics: SystemMetrics): SystemAlert[] {
    return [...this.firing].map((resource) => this.alert(resource, 'firing', USAGE[resource](metrics)));
  }

  check(metrics: SystemMetrics): SystemAlert[] {
    const alerts: SystemAlert[] = [];
    for (const resource of Object.keys(USAGE) as Resource[]) {
      const value = USAGE[resource](metrics);
      const over = value >= this.thresholds[resource];
      if (over && !this.firing.has(resource)) {
        this.firing.add(resource);
        alerts.push(this.alert(resource, 'firing', value));
      } else if (!over && this.firing.has(resource)) {
        this.firing.delete(resource);
        alerts.push(this.alert(resource, 'resolved', value));
      }
    }
    return alerts;
  }

  private alert(resource: Resource, state: SystemAlert['state'], value: number): SystemAlert {
    const threshold = this.thresholds[resource];
    const message =
      state === 'firing'
        ? `master ${LABEL[resource]} at ${value.toFixed(1)}% (threshold ${threshold}%)`
        : `master ${LABEL[resource]} back to ${value.toFixed(1)}% (threshold ${threshold}%)`;
    return { resource, state, value, threshold, message };
  }
}
