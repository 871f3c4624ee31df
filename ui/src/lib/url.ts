import { goto } from '$app/navigation';

/**
 * Puts filters and selections in the URL (so a view can be shared and survives a reload):
 * empty values are removed, the history entry is replaced, focus and scroll stay.
 */
export function setQuery(url: URL, updates: Record<string, string | number | undefined | null>): Promise<void> {
  const next = new URL(url);
  for (const [key, value] of Object.entries(updates)) {
    if (value === undefined || value === null || value === '') next.searchParams.delete(key);
    else next.searchParams.set(key, String(value));
  }
  if (next.search === url.search) return Promise.resolve();
  return goto(next, { replaceState: true, keepFocus: true, noScroll: true });
}

/** Calls `fn` once `ms` have passed without another call (service.md: filters wait 300 ms). */
export function debounce<A extends unknown[]>(fn: (...args: A) => void, ms = 300): (...args: A) => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return (...args: A) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

/** The command an operator runs on a host to make it an agent of this master. */
export function agentStartCommand(grpcPort: number | null | undefined): string {
  const host = location.hostname.includes(':') ? `[${location.hostname}]` : location.hostname;
  return `runner agent start <name> --master ${host}:${grpcPort || 50053} --token <join token>`;
}

/**
 * Calls `fn` at most once per `ms`, at the end of the window: a burst of events (a thousand agents
 * connecting) becomes one reload. `cancel` drops a pending call (a page going away).
 */
export function coalesce(fn: () => void, ms = 1000): { (): void; cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const call = () => {
    timer ??= setTimeout(() => {
      timer = undefined;
      fn();
    }, ms);
  };
  call.cancel = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  return call;
}
