// The tray icon says whether the master the window shows is up, from its /api/v1/health, asked
// every 15 seconds (and at once after a switch). Its menu shows the window, switches masters
// and quits.
import type { MenuItem, TrayFacade } from './facade.js';

export interface MasterStatus {
  state: 'starting' | 'up' | 'down';
  /** One line: "runner 0.1.0, up 5 min" or why the master cannot be reached. */
  detail: string;
}

/** Asks `<base>/api/v1/health` once; a status, never a rejection. */
export async function checkHealth(
  base: string,
  authorization: string | undefined,
  timeoutMs = 3000,
): Promise<MasterStatus> {
  try {
    const response = await fetch(`${base}/api/v1/health`, {
      headers: authorization ? { authorization } : {},
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) return { state: 'down', detail: `health check answered HTTP ${response.status}` };
    const body = (await response.json()) as { status?: string; version?: string; uptime_seconds?: number };
    if (body.status !== 'ok') return { state: 'down', detail: `health status is ${JSON.stringify(body.status)}` };
    const uptime = typeof body.uptime_seconds === 'number' ? `, up ${formatUptime(body.uptime_seconds)}` : '';
    return { state: 'up', detail: `runner ${body.version ?? '?'}${uptime}` };
  } catch (error) {
    // fetch says only "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, a bad port) is its cause.
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason =
      (error as Error).name === 'TimeoutError'
        ? `no answer within ${timeoutMs} ms`
        : (cause?.code ?? cause?.message ?? (error as Error).message);
    return { state: 'down', detail: `unreachable (${reason})` };
  }
}

function formatUptime(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 86_400)} d`;
}

/** The tray's tooltip for a master and its status. */
export function trayToolTip(masterName: string, status: MasterStatus): string {
  const word = { starting: 'starting', up: 'up', down: 'down' }[status.state];
  return `runner: ${masterName} is ${word} (${status.detail})`;
}

export interface TrayTarget {
  name: string;
  base: string;
  authorization(): Promise<string | undefined>;
}

/** Keeps a tray's tooltip and status line current by polling the master's health. */
export class TrayStatus {
  private timer: NodeJS.Timeout | undefined;
  private target: TrayTarget | undefined;
  private status: MasterStatus = { state: 'starting', detail: 'starting' };
  private generation = 0;

  constructor(
    private readonly tray: TrayFacade,
    private readonly menu: (status: MasterStatus) => MenuItem[],
    private readonly intervalMs = 15_000,
  ) {
    this.render();
  }

  get current(): MasterStatus {
    return this.status;
  }

  /** Follows another master (or none while one starts); checks it at once. */
  async follow(target: TrayTarget | undefined): Promise<void> {
    this.target = target;
    this.status = { state: 'starting', detail: target ? `connecting to ${target.base}` : 'starting' };
    this.render();
    if (this.timer === undefined) {
      this.timer = setInterval(() => void this.check(), this.intervalMs);
      this.timer.unref();
    }
    await this.check();
  }

  /** Asks the master once; an answer for a master no longer followed is dropped. */
  async check(): Promise<void> {
    const target = this.target;
    if (!target) return;
    const generation = ++this.generation;
    const status = await checkHealth(target.base, await target.authorization());
    if (generation !== this.generation || target !== this.target) return;
    this.status = status;
    this.render();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.tray.destroy();
  }

  /** Draws the tooltip and menu again (the menu lists connections, which may have changed). */
  render(): void {
    this.tray.setToolTip(trayToolTip(this.target?.name ?? 'master', this.status));
    this.tray.setContextMenu(this.menu(this.status));
  }
}
