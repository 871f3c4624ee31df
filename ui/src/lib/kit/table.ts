/**
 * The list view's model: columns, sorting kept in the URL (`?sort=name` or `?sort=-name`), and the
 * selection rules (a click toggles one row, a shift-click sets a range). No DOM here, so pages and
 * the kit share one implementation.
 */
export interface Column<T> {
  id: string;
  label: string;
  /** The value a click on the header sorts by; a column without it is not sortable. */
  sortBy?: (row: T) => string | number | undefined;
  /** Hidden on a phone's card when it only repeats what another column shows. */
  wide?: boolean;
}

export interface Sort {
  column: string;
  descending: boolean;
}

/** `name` is ascending, `-name` descending; anything else (or a column that cannot sort) is none. */
export function parseSort<T>(param: string | null, columns: Column<T>[]): Sort | undefined {
  if (!param) return undefined;
  const descending = param.startsWith('-');
  const column = descending ? param.slice(1) : param;
  return columns.some((c) => c.id === column && c.sortBy) ? { column, descending } : undefined;
}

export function formatSort(sort: Sort | undefined): string {
  return sort ? `${sort.descending ? '-' : ''}${sort.column}` : '';
}

/** A click on a header: ascending first, then descending, then the list's own order. */
export function nextSort(current: Sort | undefined, column: string): Sort | undefined {
  if (current?.column !== column) return { column, descending: false };
  return current.descending ? undefined : { column, descending: true };
}

export function sortRows<T>(rows: T[], columns: Column<T>[], sort: Sort | undefined): T[] {
  const by = sort && columns.find((c) => c.id === sort.column)?.sortBy;
  if (!sort || !by) return rows;
  const sign = sort.descending ? -1 : 1;
  return [...rows].sort((a, b) => compare(by(a), by(b), sign));
}

function compare(a: string | number | undefined, b: string | number | undefined, sign: number): number {
  if (a === b) return 0;
  // Missing values last, whichever the direction.
  if (a === undefined) return 1;
  if (b === undefined) return -1;
  return (
    sign *
    (typeof a === 'number' && typeof b === 'number'
      ? a - b
      : String(a).localeCompare(String(b), undefined, { numeric: true }))
  );
}

/**
 * The selection after a click on row `index` that turned its box `on`: with shift and an earlier
 * click (`anchor`), every row between the two takes the same state.
 */
export function toggleSelection(
  selected: ReadonlySet<string>,
  keys: string[],
  index: number,
  on: boolean,
  anchor: number | undefined,
  shift: boolean,
): Set<string> {
  const next = new Set(selected);
  const range =
    shift && anchor !== undefined
      ? keys.slice(Math.min(anchor, index), Math.max(anchor, index) + 1)
      : [keys[index] as string];
  for (const key of range) {
    if (on) next.add(key);
    else next.delete(key);
  }
  return next;
}

/** The header box: every shown row selected, some, or none. */
export function selectAllState(selected: ReadonlySet<string>, keys: string[]): 'all' | 'some' | 'none' {
  const shown = keys.filter((k) => selected.has(k)).length;
  if (shown === 0) return 'none';
  return shown === keys.length ? 'all' : 'some';
}

/** The header box clicked: all shown rows join the selection, or (when all were in) leave it. */
export function toggleAll(selected: ReadonlySet<string>, keys: string[]): Set<string> {
  const next = new Set(selected);
  if (selectAllState(selected, keys) === 'all') for (const k of keys) next.delete(k);
  else for (const k of keys) next.add(k);
  return next;
}
