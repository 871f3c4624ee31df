import { api, data } from '$lib/api/client';
import type { paths } from '$lib/api/schema';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
export type LogPage = Json<paths['/api/v1/executions/{id}/log']['get']['responses'][200]>;
type PageLine = LogPage['lines'][number];
type LogLevel = NonNullable<NonNullable<paths['/api/v1/executions/{id}/log']['get']['parameters']['query']>['level']>;

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
/** The most lines held while following a run; past it the older half is let go. */
const MAX_WINDOW = 200_000;

/** A line of the live stream: `seq` is its position in the order the run's lines were written. */
type StreamLine = Omit<PageLine, 'n'> & { seq: number };

function viewLine(l: PageLine): RunLogLine {
  const fields = l.fields && Object.keys(l.fields).length ? ` ${JSON.stringify(l.fields)}` : '';
  return { n: l.n, task: l.task, agent: l.agent, timestamp: l.timestamp, level: l.level, message: l.message + fields };
}

/**
 * A run's log read from the tail (`GET /executions/:id/log`): the last page first, older pages as
 * the viewer is scrolled up, new lines streamed while the run goes on, filters applied by the server.
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
  private filter: { task?: string; agent?: string; q?: string; level?: LogLevel } = {};
  private source: EventSource | undefined;
  private ended: (() => void) | undefined;
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
   * Follows a running run: its new lines come from `GET /executions/:id/log/stream` as they are
   * written and are appended. On every `ready` (the first, and after a reconnect) the tail is read
   * again, and streamed lines that page already holds (`seq` below its `total`) are skipped.
   * `ended` runs once the run has ended and its final tail is loaded.
   */
  follow(ended?: () => void): void {
    this.unfollow();
    this.ended = ended;
    const query = new URLSearchParams(this.filter);
    const source = new EventSource(`/api/v1/executions/${encodeURIComponent(this.id)}/log/stream?${query}`);
    this.source = source;
    // Lines that arrive while the tail is read wait here; then only those after the page are kept.
    let pending: StreamLine[] | undefined;
    let skipBelow = Infinity;
    source.addEventListener('ready', () => {
      pending = [];
      skipBelow = Infinity;
      void this.fetch(PAGE).then((page) => {
        if (this.source !== source || !page) return;
        this.lines = page.lines.map(viewLine);
        this.older = page.older;
        this.loaded = true;
        skipBelow = page.total;
        const waiting = pending ?? [];
        pending = undefined;
        this.append(waiting.filter((l) => l.seq >= skipBelow));
      });
    });
    source.addEventListener('lines', (event) => {
      const batch = JSON.parse((event as MessageEvent<string>).data) as StreamLine[];
      if (pending) pending.push(...batch);
      else this.append(batch.filter((l) => l.seq >= skipBelow));
    });
    source.addEventListener('end', () => {
      this.unfollow();
      // The log as stored (the same order: the order written), with what the stream filtered out.
      void this.tail().then(() => ended?.());
    });
  }

  /** Stops following; true when it was following (the stream's `end` may not have come yet). */
  unfollow(): boolean {
    const was = this.source !== undefined;
    this.source?.close();
    this.source = undefined;
    return was;
  }

  private append(batch: StreamLine[]): void {
    if (batch.length === 0) return;
    let n = (this.lines.at(-1)?.n ?? -1) + 1;
    const added = batch.map((l) => viewLine({ ...l, n: n++ }));
    const lines = this.lines.concat(added);
    // A run that writes for hours must not fill the tab: the oldest loaded lines give way, and
    // scrolling up reads them again from the server.
    this.lines = lines.length > MAX_WINDOW ? lines.slice(lines.length - MAX_WINDOW / 2) : lines;
    if (lines.length > MAX_WINDOW) this.older = this.lines[0]?.n;
    this.total = Math.max(this.total + added.length, (batch.at(-1)?.seq ?? 0) + 1);
    this.matched += added.length;
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

  /** Search, task, agent and level filters, applied by the server; the tail of what matches is read. */
  setFilter(q: string, task: string, agent: string, level = ''): void {
    this.filter = {
      ...(q ? { q } : {}),
      ...(task ? { task } : {}),
      ...(agent ? { agent } : {}),
      ...(level ? { level: level as LogLevel } : {}),
    };
    this.generation++;
    // A followed run's stream is opened again with the new filters; its `ready` reads the tail.
    if (this.source) this.follow(this.ended);
    else void this.tail();
  }

  /** Where the whole (filtered) log downloads from. */
  get downloadHref(): string {
    const query = new URLSearchParams({ format: 'text', ...this.filter });
    return `/api/v1/executions/${encodeURIComponent(this.id)}/log?${query}`;
  }
}
