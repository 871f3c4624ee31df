import { api, data } from '$lib/api/client';
import type { paths } from '$lib/api/schema';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
export type LogPage = Json<paths['/api/v1/executions/{id}/log']['get']['responses'][200]>;
type PageLine = LogPage['lines'][number];

/** One line of a run's log as the log viewer shows it (fields after the message). */
export interface RunLogLine {
  n: number;
  task: string;
  agent: string;
  timestamp: string;
  level: string;
  message: string;
}

/** Lines read at once: a screenful many times over, small enough to answer in a few ms. */
const PAGE = 500;
/** The most lines a refresh of a running run's tail asks for. */
const MAX_PAGE = 5000;

function viewLine(l: PageLine): RunLogLine {
  const fields = l.fields && Object.keys(l.fields).length ? ` ${JSON.stringify(l.fields)}` : '';
  return { n: l.n, task: l.task, agent: l.agent, timestamp: l.timestamp, level: l.level, message: l.message + fields };
}

/**
 * A run's log read from the tail (`GET /executions/:id/log`): the last page first, older pages as
 * the viewer is scrolled up, the tail again while the run goes on, filters applied by the server.
 */
export class RunLog {
  lines = $state.raw<RunLogLine[]>([]);
  total = $state(0);
  matched = $state(0);
  older = $state<number | undefined>();
  tasks = $state.raw<string[]>([]);
  agents = $state.raw<string[]>([]);
  error = $state<unknown>();
  loaded = $state(false);
  private filter: { task?: string; agent?: string; q?: string } = {};
  /** Answers to requests made before the latest filter change are dropped. */
  private generation = 0;

  constructor(private readonly id: string) {}

  private async fetch(tail: number, before?: number): Promise<LogPage | undefined> {
    const generation = this.generation;
    try {
      const page = await data(
        api.GET('/api/v1/executions/{id}/log', {
          params: { path: { id: this.id }, query: { tail, before, ...this.filter } },
        }),
      );
      if (generation !== this.generation) return undefined;
      this.error = undefined;
      this.total = page.total;
      this.matched = page.matched;
      this.tasks = page.tasks;
      this.agents = page.agents;
      return page;
    } catch (e) {
      if (generation === this.generation) this.error = e;
      return undefined;
    }
  }

  /** The last page, replacing what was loaded. */
  async tail(): Promise<void> {
    const page = await this.fetch(PAGE);
    if (!page) return;
    this.lines = page.lines.map(viewLine);
    this.older = page.older;
    this.loaded = true;
  }

  /**
   * New lines of a running run: the tail again, joined to what is loaded where they meet (the
   * window is replaced when more came than one read holds).
   */
  async refresh(): Promise<void> {
    const page = await this.fetch(Math.min(MAX_PAGE, Math.max(PAGE, this.lines.length)));
    if (!page) return;
    const fresh = page.lines.map(viewLine);
    const from = fresh[0]?.n ?? Infinity;
    // The loaded lines reach into the new page: nothing between them is missing.
    const overlaps = this.lines.length > 0 && (this.lines.at(-1)?.n ?? -1) >= from;
    if (overlaps) {
      this.lines = [...this.lines.filter((l) => l.n < from), ...fresh];
    } else {
      this.lines = fresh;
      this.older = page.older;
    }
    this.loaded = true;
  }

  /** The page above the loaded lines; resolves with how many were added. */
  async loadOlder(): Promise<number> {
    if (this.older === undefined) return 0;
    const page = await this.fetch(PAGE, this.older);
    if (!page) return 0;
    const added = page.lines.map(viewLine);
    this.lines = [...added, ...this.lines];
    this.older = page.older;
    return added.length;
  }

  /** Search and task/agent filters, applied by the server; the tail of what matches is read. */
  setFilter(q: string, task: string, agent: string): void {
    this.filter = { ...(q ? { q } : {}), ...(task ? { task } : {}), ...(agent ? { agent } : {}) };
    this.generation++;
    void this.tail();
  }

  /** Where the whole (filtered) log downloads from. */
  get downloadHref(): string {
    const query = new URLSearchParams({ format: 'text', ...this.filter });
    return `/api/v1/executions/${encodeURIComponent(this.id)}/log?${query}`;
  }
}
