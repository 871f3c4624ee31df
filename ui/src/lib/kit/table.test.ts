import { describe, expect, it } from 'vitest';
import {
  formatSort,
  nextSort,
  parseSort,
  selectAllState,
  sortRows,
  toggleAll,
  toggleSelection,
  type Column,
} from './table';

interface Row {
  name: string;
  cpu?: number;
}
const COLUMNS: Column<Row>[] = [
  { id: 'name', label: 'Name', sortBy: (r) => r.name },
  { id: 'cpu', label: 'CPU', sortBy: (r) => r.cpu },
  { id: 'note', label: 'Note' },
];
const ROWS: Row[] = [{ name: 'web-10', cpu: 5 }, { name: 'web-2' }, { name: 'db', cpu: 50 }];

describe('the list view model', () => {
  it('reads and writes the sort of the URL, refusing a column that cannot sort', () => {
    expect(parseSort('-cpu', COLUMNS)).toEqual({ column: 'cpu', descending: true });
    expect(parseSort('note', COLUMNS)).toBeUndefined();
    expect(parseSort('nope', COLUMNS)).toBeUndefined();
    expect(formatSort({ column: 'name', descending: false })).toBe('name');
    expect(formatSort(undefined)).toBe('');
  });

  it('cycles a header through ascending, descending and none', () => {
    const asc = nextSort(undefined, 'name');
    expect(asc).toEqual({ column: 'name', descending: false });
    expect(nextSort(asc, 'name')).toEqual({ column: 'name', descending: true });
    expect(nextSort({ column: 'name', descending: true }, 'name')).toBeUndefined();
    expect(nextSort(asc, 'cpu')).toEqual({ column: 'cpu', descending: false });
  });

  it('sorts names as people count and puts missing values last either way', () => {
    expect(sortRows(ROWS, COLUMNS, { column: 'name', descending: false }).map((r) => r.name)).toEqual([
      'db',
      'web-2',
      'web-10',
    ]);
    expect(sortRows(ROWS, COLUMNS, { column: 'cpu', descending: true }).map((r) => r.name)).toEqual([
      'db',
      'web-10',
      'web-2',
    ]);
    expect(sortRows(ROWS, COLUMNS, { column: 'cpu', descending: false }).map((r) => r.name)).toEqual([
      'web-10',
      'db',
      'web-2',
    ]);
    expect(sortRows(ROWS, COLUMNS, undefined)).toBe(ROWS);
  });

  it('toggles one row, or a range with shift from the last click', () => {
    const keys = ['a', 'b', 'c', 'd'];
    expect([...toggleSelection(new Set(), keys, 1, true, undefined, false)]).toEqual(['b']);
    expect([...toggleSelection(new Set(['a']), keys, 3, true, 0, true)].sort()).toEqual(['a', 'b', 'c', 'd']);
    expect([...toggleSelection(new Set(keys), keys, 0, false, 2, true)]).toEqual(['d']);
    // Shift without an earlier click is a plain click.
    expect([...toggleSelection(new Set(), keys, 2, true, undefined, true)]).toEqual(['c']);
  });

  it('selects all shown rows from the header, keeps rows not shown, and clears them again', () => {
    const shown = ['a', 'b'];
    expect(selectAllState(new Set(), shown)).toBe('none');
    expect(selectAllState(new Set(['a', 'z']), shown)).toBe('some');
    const all = toggleAll(new Set(['z']), shown);
    expect([...all].sort()).toEqual(['a', 'b', 'z']);
    expect(selectAllState(all, shown)).toBe('all');
    expect([...toggleAll(all, shown)]).toEqual(['z']);
  });
});
