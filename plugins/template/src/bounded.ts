/**
 * Which templates may render on the caller's thread: those whose cost is bounded by their own
 * length and their context's size, whatever the context holds. A loop (`for`, Go `range`) runs
 * once per item of something the template may build itself (`range`, a string it repeated), a
 * `set` may double a string each time it runs, a macro may recurse, a call or filter off the list
 * may allocate or backtrack without bound (`center(100000000)` took 52 s, a regex filter is a
 * ReDoS). Anything else renders on a worker thread (render-pool.ts).
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

export function jinjaIsBounded(node: NjNode | null | undefined): boolean {
  if (!node || typeof node !== 'object' || !('typename' in node)) return true;
  if (node.typename === 'Filter' && !JINJA_FILTERS.has(String(node.name?.value))) return false;
  if (node.typename === 'Is') {
    const test = node.right?.name ? node.right.name.value : node.right?.value;
    if (!JINJA_TESTS.has(String(test))) return false;
    return jinjaIsBounded(node.left) && jinjaIsBounded(node.right?.args);
  }
  if (node.typename !== 'Filter' && !JINJA_NODES.has(node.typename)) return false;
  for (const field of node.fields) {
    const child = node[field];
    if (Array.isArray(child) ? !child.every((c) => jinjaIsBounded(c as NjNode)) : !jinjaIsBounded(child as NjNode))
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

export function goIsBounded(nodes: readonly GoNode[] | undefined): boolean {
  if (!nodes) return true;
  return nodes.every((node) => {
    switch (node.type) {
      case 'text':
        return true;
      case 'action':
        return goPipeIsBounded(node.pipe);
      case 'if':
      case 'with':
        return goPipeIsBounded(node.pipe) && goIsBounded(node.list) && goIsBounded(node.elseList);
      default:
        return false;
    }
  });
}
