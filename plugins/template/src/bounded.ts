/**
 * Which templates may render on the caller's thread: those whose cost is bounded by their own
 * length and their context's size, whatever the context holds. A loop (`for`, Go `range`) runs
 * once per item of something the template may build itself (`range`, a string it repeated), a
 * `set` may double a string each time it runs, a macro may recurse, a call or filter off the list
 * may allocate or backtrack without bound (`center(100000000)` took 52 s, a regex filter is a
 * ReDoS). One loop over the context's data or a small literal range is linear, nested loops
 * are not. Anything else renders in a template worker (render-pool.ts).
 */
import type { Node as GoNode, Pipe as GoPipe } from './go/parser.js';
import type { NjNode } from './nunjucks-internals.js';

/** AST nodes of nunjucks whose own work is constant or linear in their operands. */
const JINJA_NODES = new Set([
  'Root',
  'NodeList',
  'Output',
  'TemplateData',
  'Symbol',
  'LookupVal',
  'Literal',
  'Group',
  'Array',
  'Dict',
  'Pair',
  'KeywordArgs',
  'InlineIf',
  'If',
  'Or',
  'And',
  'Not',
  'In',
  'Is',
  'Compare',
  'CompareOperand',
  'Add',
  'Sub',
  'Mul',
  'Div',
  'FloorDiv',
  'Mod',
  'Neg',
  'Pos',
  'Concat',
]);

/** Filters linear in their input (no regex, no padding to a width, no repetition). */
const JINJA_FILTERS = new Set([
  'default',
  'd',
  'lower',
  'upper',
  'trim',
  'capitalize',
  'title',
  'int',
  'float',
  'string',
  'bool',
  'length',
  'count',
  'first',
  'last',
  'join',
  'safe',
  'abs',
  'round',
  'quote',
  'to_json',
  'tojson',
  'basename',
  'dirname',
  'ternary',
  'min',
  'max',
  'unique',
]);

/** Tests with no regex: `match` and `search` take a pattern. */
const JINJA_TESTS = new Set([
  'defined',
  'undefined',
  'none',
  'null',
  'boolean',
  'number',
  'string',
  'mapping',
  'iterable',
  'sameas',
  'eq',
  'equalto',
  'ne',
  'lt',
  'gt',
  'le',
  'ge',
  'odd',
  'even',
  'divisibleby',
  'truthy',
  'falsy',
]);

/** Items a literal `range()` of a loop that renders on the caller's thread may make. */
const SMALL_RANGE = 10_000;

/**
 * What one loop may go over on the caller's thread: the context's data (a lookup: its cost is
 * the context's size) or a literal `range()` of at most SMALL_RANGE items.
 */
function isPlainIterable(node: NjNode): boolean {
  if (node.typename === 'Symbol' || node.typename === 'LookupVal') return jinjaIsBounded(node, true);
  if (node.typename !== 'FunCall' || node.name?.typename !== 'Symbol' || node.name.value !== 'range') return false;
  const args = (node.args?.children ?? []) as NjNode[];
  if (args.length < 1 || args.length > 3) return false;
  const values = args.map((arg) => (arg.typename === 'Literal' ? arg.value : undefined));
  if (!values.every((v) => typeof v === 'number' && Number.isFinite(v))) return false;
  const [start, stop, step] = values.length === 1 ? [0, values[0] as number, 1] : (values as number[]);
  return Math.abs(((stop ?? 0) - start) / (step || 1)) <= SMALL_RANGE;
}

/**
 * Bounded: every node is constant or linear in its operands, and loops are single (not nested)
 * over the context's data or a small literal range, so the whole costs O(template x context).
 */
export function jinjaIsBounded(node: NjNode | null | undefined, inLoop = false): boolean {
  if (!node || typeof node !== 'object' || !('typename' in node)) return true;
  if (node.typename === 'For') {
    if (inLoop || !isPlainIterable(node.arr as NjNode)) return false;
    return jinjaIsBounded(node.body as NjNode, true) && jinjaIsBounded(node.else_ as NjNode, inLoop);
  }
  if (node.typename === 'Filter' && !JINJA_FILTERS.has(String(node.name?.value))) return false;
  if (node.typename === 'Is') {
    const test = node.right?.name ? node.right.name.value : node.right?.value;
    if (!JINJA_TESTS.has(String(test))) return false;
    return jinjaIsBounded(node.left, inLoop) && jinjaIsBounded(node.right?.args, inLoop);
  }
  if (node.typename !== 'Filter' && !JINJA_NODES.has(node.typename)) return false;
  for (const field of node.fields) {
    const child = node[field];
    if (
      Array.isArray(child)
        ? !child.every((c) => jinjaIsBounded(c as NjNode, inLoop))
        : !jinjaIsBounded(child as NjNode, inLoop)
    )
      return false;
  }
  // A Filter's name is a Symbol child: its args are walked above with the rest.
  return true;
}

/** Go functions linear in their arguments (`printf` pads to any width, `replace` multiplies). */
const GO_FUNCTIONS = new Set([
  'and',
  'or',
  'not',
  'len',
  'index',
  'eq',
  'ne',
  'lt',
  'le',
  'gt',
  'ge',
  'default',
  'empty',
  'ternary',
  'upper',
  'lower',
  'trim',
  'trimPrefix',
  'trimSuffix',
  'contains',
  'hasPrefix',
  'hasSuffix',
  'quote',
  'squote',
  'toString',
  'toJson',
  'int',
  'hasKey',
  'join',
  'print',
]);

function goPipeIsBounded(pipe: GoPipe): boolean {
  return pipe.cmds.every((cmd) =>
    cmd.args.every((arg) =>
      arg.type === 'function' ? GO_FUNCTIONS.has(arg.name) : arg.type === 'pipe' ? goPipeIsBounded(arg.pipe) : true,
    ),
  );
}

/** A `range` over the context's data: one command of one field or variable, no function. */
function goRangesOverData(pipe: GoPipe): boolean {
  return (
    pipe.cmds.length === 1 &&
    pipe.cmds[0].args.length === 1 &&
    ['field', 'variable', 'dot'].includes(pipe.cmds[0].args[0].type)
  );
}

/** As Jinja's: single (not nested) `range`s over the context's data, linear calls only. */
export function goIsBounded(nodes: readonly GoNode[] | undefined, inRange = false): boolean {
  if (!nodes) return true;
  return nodes.every((node) => {
    switch (node.type) {
      case 'text':
        return true;
      case 'action':
        return goPipeIsBounded(node.pipe);
      case 'if':
      case 'with':
        return goPipeIsBounded(node.pipe) && goIsBounded(node.list, inRange) && goIsBounded(node.elseList, inRange);
      case 'range':
        return !inRange && goRangesOverData(node.pipe) && goIsBounded(node.list, true) && goIsBounded(node.elseList);
      default:
        // break and continue: inside a range, which is bounded as a whole.
        return inRange;
    }
  });
}
