// Whether a compiled task script is provably bounded, so that `lua.isolation: auto` may run it on
// the process's own thread (README, "Which scripts run inline"). Read from the chunk's bytecode
// (fengari's Proto), soundly and conservatively: anything this file cannot prove bounded is
// "unbounded" and runs in a worker. Bounded means: every instruction runs at most once (no loop, no
// backward jump, no function of the script's own, so no recursion), and no instruction can run
// long or allocate much on its own (a call reaches only the runner's modules and a short list of
// library functions whose cost is linear in their arguments; `..` cannot multiply what exists by
// more than CONCAT_GROWTH_LIMIT).
import lopcodes from 'fengari/src/lopcodes.js';
import { jsString } from './lua-strings.js';

const OP = lopcodes.OpCodesI;

/**
 * Library functions an inline script may call: their cost is linear in their arguments, their
 * result no larger than them (or small), they call no Lua function back and wait for nothing.
 * Not here, on purpose: `string.rep`/`format`/`find`/`gsub`/`match` (build or search without
 * bound), `pcall`/`xpcall`/`select`/`load`/`require`/`setmetatable`/`pairs`, the `table`, `io`,
 * `coroutine`, `debug` and `package` libraries, `os.execute`/`remove`/`rename`/`exit`.
 */
export const BOUNDED_LIBRARY: Readonly<Record<string, readonly string[] | true>> = {
  print: true,
  tostring: true,
  tonumber: true,
  type: true,
  assert: true,
  error: true,
  string: ['len', 'lower', 'upper', 'sub', 'byte', 'reverse'],
  math: [
    'abs',
    'ceil',
    'floor',
    'fmod',
    'modf',
    'sqrt',
    'exp',
    'log',
    'max',
    'min',
    'random',
    'tointeger',
    'type',
    'ult',
  ],
  os: ['time', 'date', 'getenv', 'clock', 'difftime'],
};

/**
 * The most `..` may multiply a script's largest string: the product over its CONCAT instructions
 * of how many values each joins (each runs at most once, so no string it builds is longer than
 * this many times the longest it was given). `"built " .. name .. " in " .. t` is 4.
 */
export const CONCAT_GROWTH_LIMIT = 64;

/** What a chunk may reach, from the running state and the module registry (never a copy of them). */
export interface ChunkRules {
  /** Tables a script may index for a function to call: module and library name to function names. */
  callable: ReadonlyMap<string, ReadonlySet<string>>;
  /** Global functions a script may call (`print`, ...). */
  functions: ReadonlySet<string>;
  /** Every global of a fresh state: reading one not in `callable` or `functions` is unbounded. */
  initialGlobals: ReadonlySet<string>;
}

export type Verdict = { bounded: true } | { bounded: false; reason: string; line?: number };

/** The rules for the modules provided (by name, with their functions' declarations) and a state's globals. */
export function chunkRules(
  modules: readonly { name: string; functions: Readonly<Record<string, { callsLua: boolean }>> }[],
  initialGlobals: Iterable<string>,
): ChunkRules {
  const globals = new Set(initialGlobals);
  const callable = new Map<string, ReadonlySet<string>>();
  for (const spec of modules) {
    // A function that calls Lua back runs what the script cannot see; the registry has checked
    // that every function declares it, and holds the others to it (module-registry.ts).
    const fns = Object.entries(spec.functions)
      .filter(([, fn]) => fn.callsLua === false)
      .map(([name]) => name);
    callable.set(spec.name, new Set(fns));
  }
  const functions = new Set<string>();
  for (const [name, allowed] of Object.entries(BOUNDED_LIBRARY)) {
    if (!globals.has(name)) continue;
    if (allowed === true) functions.add(name);
    else callable.set(name, new Set(allowed));
  }
  return { callable, functions, initialGlobals: globals };
}

/** fengari's Proto, the part read here. */
export interface Proto {
  code: { opcode: number; A: number; B: number; C: number; Bx: number; sBx: number; Ax: number }[];
  k: { ttisstring(): boolean; value: unknown }[];
  p: unknown[];
  upvalues: { name: { getstr(): Uint8Array } | null }[];
  lineinfo: number[];
  maxstacksize: number;
}

/**
 * What a register holds, as far as it matters: `t:<name>` a callable table (a module, `string`),
 * `s:<name>` that table as the self argument SELF passed, `f:<table>.<fn>` or `f:<fn>` a function
 * the script may call, `n:<table>.<fn>` one it may not (named in the reason), `x` maybe a callable
 * table (paths that joined), `o` anything else.
 */
type Kind = string;
const OTHER = 'o';
const MAYBE_TABLE = 'x';

const isTable = (kind: Kind | undefined): boolean =>
  kind !== undefined && (kind === MAYBE_TABLE || kind.startsWith('t:') || kind.startsWith('s:'));

function join(a: Kind, b: Kind): Kind {
  if (a === b) return a;
  return isTable(a) || isTable(b) ? MAYBE_TABLE : OTHER;
}

class Unbounded extends Error {
  constructor(
    readonly reason: string,
    readonly pc: number,
  ) {
    super(reason);
  }
}

/** Decides whether the main function `proto` of a chunk is bounded under `rules`. */
export function classifyChunk(proto: Proto, rules: ChunkRules): Verdict {
  try {
    analyse(proto, rules);
    return { bounded: true };
  } catch (error) {
    if (!(error instanceof Unbounded)) throw error;
    return { bounded: false, reason: error.reason, line: proto.lineinfo[error.pc] };
  }
}

function analyse(proto: Proto, rules: ChunkRules): void {
  if (proto.p.length > 0) throw new Unbounded('it defines a function', 0);
  const code = proto.code;
  const size = proto.maxstacksize;
  const constant = (index: number): string | null => {
    const k = proto.k[index];
    return k?.ttisstring() ? jsString((k.value as { getstr(): Uint8Array }).getstr()) : null;
  };
  const rkString = (rk: number): string | null => (rk & lopcodes.BITRK ? constant(rk & ~lopcodes.BITRK) : null);
  const isEnv = (upvalue: number): boolean => {
    const name = proto.upvalues[upvalue]?.name;
    return name != null && jsString(name.getstr()) === '_ENV';
  };
  /** States flowing into an instruction by a forward jump, joined with its fall-through state. */
  const incoming = new Map<number, Kind[]>();
  const merge = (pc: number, state: Kind[]): void => {
    const there = incoming.get(pc);
    incoming.set(pc, there === undefined ? [...state] : there.map((kind, r) => join(kind, state[r])));
  };
  let growth = 1;
  let state: Kind[] | null = new Array<Kind>(size).fill(OTHER);

  for (let pc = 0; pc < code.length; pc++) {
    const arrived = incoming.get(pc);
    incoming.delete(pc);
    if (state === null && arrived === undefined) continue; // unreachable
    const s: Kind[] =
      state === null ? arrived! : arrived === undefined ? state : state.map((k, r) => join(k, arrived[r]));
    state = s;
    const i = code[pc];
    const { A, B, C } = i;
    const fail = (reason: string): never => {
      throw new Unbounded(reason, pc);
    };
    /** A register read as a value: a callable table must not escape (it could be changed or aliased). */
    const use = (r: number): void => {
      if (isTable(s[r])) fail('it uses a module or library table as a value');
    };
    const useRK = (rk: number): void => {
      if (!(rk & lopcodes.BITRK)) use(rk);
    };
    const clobberFrom = (from: number): void => {
      for (let r = from; r < size; r++) s[r] = OTHER;
    };

    switch (i.opcode) {
      case OP.OP_MOVE:
        s[A] = s[B];
        break;
      case OP.OP_LOADK:
      case OP.OP_LOADKX:
      case OP.OP_NEWTABLE:
        s[A] = OTHER;
        break;
      case OP.OP_LOADBOOL:
        s[A] = OTHER;
        if (C !== 0) {
          merge(pc + 2, s);
          state = null;
        }
        break;
      case OP.OP_LOADNIL:
        for (let r = A; r <= A + B; r++) s[r] = OTHER;
        break;
      case OP.OP_GETUPVAL:
      case OP.OP_SETUPVAL:
        fail('it reads or replaces _ENV');
        break;
      case OP.OP_GETTABUP: {
        const name = rkString(C);
        if (!isEnv(B) || name === null) fail('it reads a global by a computed name');
        s[A] = globalKind(name!, rules) ?? fail(`it reads the global '${name}'`);
        break;
      }
      case OP.OP_SETTABUP: {
        const name = rkString(B);
        if (!isEnv(A) || name === null) fail('it sets a global by a computed name');
        if (rules.initialGlobals.has(name!) || rules.callable.has(name!) || rules.functions.has(name!))
          fail(`it replaces the global '${name}'`);
        useRK(C);
        break;
      }
      case OP.OP_GETTABLE: {
        useRK(C);
        const table = s[B];
        const fn = rkString(C);
        const owner = table.startsWith('t:') ? table.slice(2) : null;
        s[A] =
          owner === null || fn === null
            ? OTHER
            : rules.callable.get(owner)!.has(fn)
              ? `f:${owner}.${fn}`
              : `n:${owner}.${fn}`;
        break;
      }
      case OP.OP_SETTABLE:
        use(A);
        useRK(B);
        useRK(C);
        break;
      case OP.OP_SELF: {
        // `("x"):rep(n)` and `s:find(p)`: a method of a value not known to be a module is a string's.
        useRK(C);
        const table = s[B];
        const fn = rkString(C);
        if (!table.startsWith('t:') || fn === null || !rules.callable.get(table.slice(2))!.has(fn))
          fail(`it calls a method ${fn === null ? '' : `'${fn}' `}of a value that is not a module`);
        s[A + 1] = `s:${table.slice(2)}`;
        s[A] = `f:${table.slice(2)}.${fn}`;
        break;
      }
      case OP.OP_ADD:
      case OP.OP_SUB:
      case OP.OP_MUL:
      case OP.OP_MOD:
      case OP.OP_POW:
      case OP.OP_DIV:
      case OP.OP_IDIV:
      case OP.OP_BAND:
      case OP.OP_BOR:
      case OP.OP_BXOR:
      case OP.OP_SHL:
      case OP.OP_SHR:
        useRK(B);
        useRK(C);
        s[A] = OTHER;
        break;
      case OP.OP_UNM:
      case OP.OP_BNOT:
      case OP.OP_NOT:
      case OP.OP_LEN:
        use(B);
        s[A] = OTHER;
        break;
      case OP.OP_CONCAT:
        for (let r = B; r <= C; r++) use(r);
        growth *= C - B + 1;
        if (growth > CONCAT_GROWTH_LIMIT)
          fail(`its '..' could make a string more than ${CONCAT_GROWTH_LIMIT} times the longest it is given`);
        s[A] = OTHER;
        break;
      case OP.OP_JMP:
        if (i.sBx < 0) fail('it loops (a backward jump: while, repeat or goto)');
        merge(pc + 1 + i.sBx, s);
        state = null;
        break;
      case OP.OP_EQ:
      case OP.OP_LT:
      case OP.OP_LE:
        useRK(B);
        useRK(C);
        merge(pc + 2, s);
        break;
      case OP.OP_TEST:
        merge(pc + 2, s);
        break;
      case OP.OP_TESTSET:
        // R(A) := R(B) on one path, unchanged on the other: both, joined.
        s[A] = join(s[A], s[B]);
        merge(pc + 2, s);
        break;
      case OP.OP_CALL:
      case OP.OP_TAILCALL: {
        const target = s[A];
        if (target.startsWith('n:'))
          fail(`it calls ${target.slice(2)}, which is not among the calls known to be bounded`);
        if (!target.startsWith('f:')) fail('it calls a function that is not a module function');
        const owner = target.includes('.') ? target.slice(2, target.indexOf('.')) : null;
        const last = B === 0 ? size - 1 : A + B - 1;
        for (let r = A + 1; r <= last; r++) {
          // `exec:run(x)` passes the module as its own self argument: allowed there only.
          if (r === A + 1 && owner !== null && s[r] === `s:${owner}`) continue;
          use(r);
        }
        clobberFrom(A);
        break;
      }
      case OP.OP_RETURN:
        break;
      case OP.OP_FORLOOP:
      case OP.OP_FORPREP:
      case OP.OP_TFORCALL:
      case OP.OP_TFORLOOP:
        fail('it loops (a for loop)');
        break;
      case OP.OP_SETLIST: {
        use(A);
        const last = B === 0 ? size - 1 : A + B;
        for (let r = A + 1; r <= last; r++) use(r);
        break;
      }
      case OP.OP_CLOSURE:
        fail('it defines a function');
        break;
      case OP.OP_VARARG:
        if (B === 0) clobberFrom(A);
        else for (let r = A; r <= A + B - 2; r++) s[r] = OTHER;
        break;
      case OP.OP_EXTRAARG:
        break;
      default:
        fail(`opcode ${i.opcode} is not known here`);
    }
  }
}

/** The kind of what a global read gives, or null when reading it makes a script unbounded. */
function globalKind(name: string, rules: ChunkRules): Kind | null {
  if (rules.callable.has(name)) return `t:${name}`;
  if (rules.functions.has(name)) return `f:${name}`;
  // Anything else the fresh state holds is the standard library (string, pcall, load, _G, ...).
  if (rules.initialGlobals.has(name)) return null;
  // The run's globals (vars, tasks, ...) and the script's own: data, never called.
  return OTHER;
}

/**
 * Whether a chunk proven side-effect free (classifyChunk with no module callable) also leaves
 * nothing in its state that a later run could see, so that it may run in a state used before
 * (runtime.ts). Such a chunk can only write to tables it builds and to the run's own globals
 * (fresh tables each run: library tables cannot be used as values), so what remains is: it sets
 * no global, and it names no `random` (math.random advances the state's generator). A chunk that
 * does either gets a fresh state as any other.
 */
export function leavesNoTrace(proto: Proto): boolean {
  const names = (rk: number) =>
    rk & lopcodes.BITRK && proto.k[rk & ~lopcodes.BITRK]?.ttisstring()
      ? jsString((proto.k[rk & ~lopcodes.BITRK].value as { getstr(): Uint8Array }).getstr())
      : null;
  return proto.code.every((i) => {
    if (i.opcode === OP.OP_SETTABUP) return false;
    if (i.opcode === OP.OP_GETTABLE || i.opcode === OP.OP_SELF || i.opcode === OP.OP_GETTABUP)
      return !/^random(seed)?$/.test(names(i.C) ?? '');
    return true;
  });
}
