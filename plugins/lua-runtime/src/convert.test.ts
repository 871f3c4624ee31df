import { defineLuaModule, InvalidInputError, LuaError, type LuaValue } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { fn, testRuntime } from './test-support.js';

const probe = defineLuaModule({
  name: 'probe',
  description: 'hands values across',
  functions: { take: fn(), give: fn(), cyclic: fn(), deep: fn(), adder: fn() },
});

function make() {
  const taken: LuaValue[][] = [];
  let toGive: unknown;
  const t = testRuntime({
    modules: [
      [
        probe,
        {
          take: (_call, ...args) => {
            taken.push(args);
          },
          give: () => toGive,
          cyclic: () => {
            const a: Record<string, unknown> = { name: 'a' };
            a.self = a;
            return a;
          },
          deep: () => {
            let v: unknown = 'bottom';
            for (let i = 0; i < 150; i++) v = [v];
            return v;
          },
          adder: (_call, n) => (x: number) => x + (n as number),
        },
      ],
    ],
  });
  return {
    ...t,
    taken,
    give(value: unknown) {
      toGive = value;
    },
  };
}

describe('Lua to JavaScript', () => {
  it('turns 1..n tables into arrays and other tables into objects, nested', async () => {
    const { values } = make();
    expect(
      await values(`return
        { 1, 2, 3 },
        { a = 1, b = { c = { 1, { d = true } } } },
        {},
        { [1] = "x", [3] = "z" },
        { 1, 2, x = 1 },
        { [2] = "b", [1] = "a" },
        { [1.5] = "f", [true] = "t" }`),
    ).toEqual([
      [1, 2, 3],
      { a: 1, b: { c: [1, { d: true }] } },
      {},
      { 1: 'x', 3: 'z' },
      { 1: 1, 2: 2, x: 1 },
      ['a', 'b'],
      { '1.5': 'f', true: 't' },
    ]);
  });

  it('gives numbers, strings, nil and booleans their JavaScript counterparts', async () => {
    const { values } = make();
    expect(await values('return 3, 3.0, 2^53, 1/0, -1/0, "héllo", "\\xff", nil, false')).toEqual([
      3,
      3,
      2 ** 53,
      Infinity,
      -Infinity,
      'héllo',
      '\ufffd',
      null,
      false,
    ]);
    const [nan] = await values('return 0/0');
    expect(Number.isNaN(nan)).toBe(true);
  });

  it('passes module arguments the same way', async () => {
    const { run, taken } = make();
    await run('probe.take({ list = { "a", "b" } }, 1.5, nil, "s")');
    expect(taken).toEqual([[{ list: ['a', 'b'] }, 1.5, null, 's']]);
  });

  it('treats a table that contains itself as an error, not a hang', async () => {
    const { run, values } = make();
    await expect(run('local t = { 1 } t.me = t return t')).rejects.toThrow(
      'return value #1.me: the table contains itself (a cycle)',
    );
    expect(await values('local t = {} t[1] = { t } return pcall(probe.take, t)')).toEqual([
      false,
      "bad argument #1 to 'probe.take' (argument #1[1][1]: the table contains itself (a cycle) and cannot be converted)",
    ]);
    // Shared (not cyclic) tables are fine, and copied.
    expect(await values('local s = { 1 } return { s, s }')).toEqual([[[1], [1]]]);
  });
});

describe('JavaScript to Lua', () => {
  it('makes whole numbers integers and others floats, as Lua 5.3 shows them', async () => {
    const { values, give } = make();
    give([3, 3.5, -7, 2 ** 31, 1e300]);
    expect(
      await values(`local t = probe.give()
        local out = {}
        for i, v in ipairs(t) do out[i] = math.type(v) .. " " .. tostring(v) end
        return out`),
    ).toEqual([['integer 3', 'float 3.5', 'integer -7', 'float 2147483648.0', 'float 1e+300']]);
  });

  it('makes arrays sequences and objects tables, nested; null and undefined are nil', async () => {
    const { values, give } = make();
    give({ hosts: ['web-1', 'web-2'], port: { http: 80 }, none: null, missing: undefined, holes: [1, null, 3] });
    expect(
      await values(`local v = probe.give()
        return #v.hosts, v.hosts[2], v.port.http, v.none, v.missing, v.holes[1], v.holes[2], v.holes[3]`),
    ).toEqual([2, 'web-2', 80, null, null, 1, null, 3]);
  });

  it('gives bytes as a Lua string, a Date as ISO text', async () => {
    const { values, give } = make();
    give([new Uint8Array([0, 255, 65]), new Date(Date.UTC(2024, 0, 2, 3, 4, 5))]);
    expect(await values('local v = probe.give() return #v[1], v[1]:byte(2), v[1]:sub(3), v[2]')).toEqual([
      3,
      255,
      'A',
      '2024-01-02T03:04:05.000Z',
    ]);
  });

  it('turns a cyclic result into a Lua error that names the function', async () => {
    const { values } = make();
    const [ok, message] = await values('return pcall(probe.cyclic)');
    expect(ok).toBe(false);
    expect(message).toBe(
      'the result of probe.cyclic cannot be given to Lua: the result of probe.cyclic.self: the value contains itself (a cycle) and cannot be converted',
    );
  });

  it('refuses values nested absurdly deep', async () => {
    const { values } = make();
    const [ok, message] = await values('return pcall(probe.deep)');
    expect(ok).toBe(false);
    expect(message).toMatch(/nested more than 100 deep/);
  });

  it('refuses cyclic globals before running anything', async () => {
    const { run } = make();
    const vars: Record<string, unknown> = {};
    vars.self = vars;
    const error = await run('return 1', { globals: { vars: vars as LuaValue } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).details).toEqual({ field: 'globals.vars.self' });
  });

  it('makes a JavaScript function callable from Lua', async () => {
    const { values } = make();
    expect(await values('local add5 = probe.adder(5) return add5(1), add5(10)')).toEqual([6, 15]);
  });
});

describe('Lua functions in JavaScript', () => {
  it('are LuaFunctionRefs that JavaScript can call and pass back', async () => {
    const { run, taken } = make();
    await run('probe.take(function(a, b) return a + b, "sum" end)');
    expect(taken[0][0]).toMatchObject({ kind: 'lua-function' });
    // The script has ended: its functions went with it.
    const ref = taken[0][0] as { call(...args: LuaValue[]): Promise<LuaValue[]> };
    await expect(ref.call(1, 2)).rejects.toBeInstanceOf(LuaError);
  });

  it('cannot be passed into another script', async () => {
    const { run, taken, give } = make();
    await run('probe.take(print)');
    give(taken[0][0]);
    await expect(run('return pcall(probe.give)').then((r) => r.values)).resolves.toEqual([
      false,
      'the result of probe.give cannot be given to Lua: the result of probe.give: a Lua function of another script cannot be passed into this one',
    ]);
  });
});
