import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { formatYaml } from './yaml-output.js';

describe('formatYaml', () => {
  it('reads back as exactly the data, strings a reader could mistake included', () => {
    const data = {
      name: 'web-1',
      plain: 'a sentence with spaces',
      tricky: ['true', 'no', '12', '1e3', '', ' lead', 'trail ', 'a: b', '- x', '#c', 'null', '~', 'multi\nline'],
      numbers: [0, -1.5, 12],
      flags: { on: true, off: false, none: null },
      empty: { list: [], map: {} },
      rows: [{ id: 'r-1', tasks: [{ name: 'a', counts: { ok: 1 } }] }, [1, [2]]],
      'key with: colon': 1,
    };
    expect(parse(formatYaml(data))).toEqual(data);
  });

  it('writes a list of records as YAML people read', () => {
    expect(formatYaml({ groups: [{ name: 'web', members: ['a', 'b'] }] })).toBe(
      'groups:\n  - name: web\n    members:\n      - a\n      - b\n',
    );
  });
});
