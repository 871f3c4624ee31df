/**
 * What a page shows of a read from the master: the last answer, the error of the last read (the
 * last answer stays shown beside it), and whether a read has ended yet (the loading state before
 * the first). `load()` reads again, for a filter change, a live event or a retry; an answer that
 * comes after a newer read began is dropped, so a slow read never overwrites a newer one.
 *
 * Called from an `$effect`, the reactive values `read` takes before its first `await` (the URL's
 * filters) are what the effect follows: a change of filter reads again.
 */
export class Loader<T> {
  value = $state.raw<T>();
  error = $state<unknown>();
  loaded = $state(false);
  private generation = 0;

  /**
   * `apply` takes each answer kept, for a page that changes what it shows afterwards (a row a live
   * event updates in place): it keeps its own `$state` and `value` is only the last answer.
   */
  constructor(
    private readonly read: () => Promise<T>,
    private readonly apply?: (value: T) => void,
  ) {}

  async load(): Promise<void> {
    const mine = ++this.generation;
    try {
      const value = await this.read();
      if (mine !== this.generation) return;
      this.value = value;
      this.apply?.(value);
      this.error = undefined;
    } catch (e) {
      if (mine === this.generation) this.error = e;
    } finally {
      if (mine === this.generation) this.loaded = true;
    }
  }

  /** For a retry button: reads again. */
  readonly retry = (): void => void this.load();
}
