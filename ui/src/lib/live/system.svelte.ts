import type { paths } from '$lib/api/schema';
import { desktop } from '$lib/desktop';
import { live, type Message, type Messages } from './socket.svelte';

export type SystemMetrics = Messages['system_metrics'];
/** The dashboard plugin's alert, typed from its GET /dashboard schema (the SDK leaves it open). */
export type SystemAlert =
  paths['/api/v1/dashboard']['get']['responses'][200]['content']['application/json']['alerts'][number];

export interface Sample {
  at: number;
  metrics: SystemMetrics;
}

export interface Activity {
  id: string;
  at: number;
  type: string;
  text: string;
  tone: 'ok' | 'bad' | 'info';
  href?: string;
}

/** 10 minutes of 5-second samples. */
const MAX_SAMPLES = 120;
/** Where the samples outlive a reload of the tab (the master keeps no history of them). */
const KEPT = 'runner.system.samples';
const KEPT_MS = 10 * 60_000;

/** The samples this tab saw before a reload, the last ten minutes of them. */
function keptSamples(): Sample[] {
  try {
    const kept = JSON.parse(sessionStorage.getItem(KEPT) ?? '[]') as Sample[];
    const since = Date.now() - KEPT_MS;
    return Array.isArray(kept) ? kept.filter((s) => typeof s?.at === 'number' && s.at >= since && s.metrics) : [];
  } catch {
    return [];
  }
}

function keepSamples(samples: Sample[]): void {
  try {
    sessionStorage.setItem(KEPT, JSON.stringify(samples));
  } catch {
    // Storage full or refused: the charts start again after a reload, as they did.
  }
}
const MAX_ACTIVITY = 50;

/**
 * What the dashboard shows live, collected for the whole tab so that its charts and feed keep
 * their history across page changes: system_metrics samples, the firing alerts, and an activity
 * feed of workflow and agent events.
 */
class SystemState {
  samples = $state<Sample[]>(keptSamples());
  alerts = $state<SystemAlert[]>([]);
  activity = $state<Activity[]>([]);

  constructor() {
    live.on('system_metrics', (m) => {
      this.samples = [...this.samples.slice(-(MAX_SAMPLES - 1)), { at: at(m), metrics: m.data }];
      keepSamples(this.samples);
    });
    live.on('system_alert', (m) => this.setAlert(m.data as SystemAlert));
    // Inside the desktop app a failed run raises a native notification.
    live.on('workflow.failed', (m) => {
      void desktop
        ?.notifyRunFailed({ runId: m.data.run_id, workflow: m.data.workflow_name, message: `status ${m.data.status}` })
        .catch(() => undefined);
    });
    live.onAny((m) => {
      const item = activityOf(m);
      if (item) this.activity = [item, ...this.activity.slice(0, MAX_ACTIVITY - 1)];
    });
  }

  /** Alerts as GET /dashboard reports them at load (a late tab missed the broadcast). */
  setAlerts(alerts: SystemAlert[]): void {
    this.alerts = alerts.filter((a) => a.state === 'firing');
  }

  /** A first sample from GET /dashboard, so charts do not start empty. */
  seed(metrics: SystemMetrics | null | undefined): void {
    if (metrics && this.samples.length === 0) {
      this.samples = [{ at: Date.now(), metrics }];
      keepSamples(this.samples);
    }
  }

  private setAlert(alert: SystemAlert): void {
    const others = this.alerts.filter((a) => a.resource !== alert.resource);
    this.alerts = alert.state === 'firing' ? [...others, alert] : others;
  }
}

function at(m: Message): number {
  return m.timestamp_ms ?? m.timestamp * 1000;
}

function activityOf(m: Message): Activity | undefined {
  const id = m.id ?? `${m.type}-${at(m)}`;
  const base = { id, at: at(m), type: m.type };
  switch (m.type) {
    case 'workflow.started':
    case 'workflow.completed':
    case 'workflow.failed': {
      const d = m.data as Messages['workflow.started'];
      const verb = m.type.split('.')[1];
      return {
        ...base,
        text: `Workflow ${d.workflow_name} ${verb}`,
        tone: verb === 'failed' ? 'bad' : verb === 'completed' ? 'ok' : 'info',
        href: `/executions/${encodeURIComponent(d.run_id)}`,
      };
    }
    case 'task.failed': {
      const d = m.data as Messages['task.failed'];
      return {
        ...base,
        text: `Task ${d.task_name} of ${d.workflow_name} failed on ${d.agent}`,
        tone: 'bad',
        href: `/executions/${encodeURIComponent(d.run_id)}`,
      };
    }
    case 'agent.connected':
    case 'agent.disconnected': {
      const d = m.data as Messages['agent.connected'];
      const up = m.type === 'agent.connected';
      return {
        ...base,
        text: `Agent ${d.agent_name} ${up ? 'connected' : 'disconnected'} (${d.address})`,
        tone: up ? 'ok' : 'bad',
        href: `/agents?agent=${encodeURIComponent(d.agent_name)}`,
      };
    }
    case 'system_alert': {
      const d = m.data as unknown as SystemAlert;
      return { ...base, text: d.message, tone: d.state === 'firing' ? 'bad' : 'ok' };
    }
    default:
      return undefined;
  }
}

export const system = new SystemState();
