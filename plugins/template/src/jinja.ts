/**
 * Jinja syntax, rendered by nunjucks with three changes the workflow contract needs:
 * - strict lookups: a variable, key or index that is missing is an error naming its path and
 *   position, except under `default`/`d` and the `defined`/`undefined` tests;
 * - no autoescaping, and lists and mappings print as JSON (not `[object Object]`);
 * - unknown filters and tests, and `include`/`extends`/`import`, fail at compile time.
 *
 * Strictness is compiled in: a subclass of nunjucks' compiler emits calls to our lookup helpers
 * instead of `runtime.memberLookup`, so it costs nothing for templates that do not use it and
 * needs no change to the nunjucks module other plugins might share.
 */
import { createRequire } from 'node:module';
import { TemplateError, type TemplateContext, type TemplateVariable } from '@runner/plugin-sdk';
import { extraFilters, extraTests, pythonSplit } from './jinja-filters.js';
import { jinjaIsBounded } from './bounded.js';
import type {
  NjContext,
  NjEnvironmentInternals,
  NjFrame,
  NjNode,
  NjRuntimeFrame,
  NjTemplateError,
  NunjucksModule,
} from './nunjucks-internals.js';
import { isPlainObject, RANGE_ITEMS_PER_RENDERING } from './values.js';

// nunjucks (CommonJS) is required when the first Jinja template is compiled, not when this module
// loads: it costs tens of milliseconds, and most runs render no template at all. Synchronous,
// because the TemplateEngine service is.
const requireHere = createRequire(import.meta.url);
let nunjucksModule: NunjucksModule | undefined;
const loadNunjucks = (): NunjucksModule => (nunjucksModule ??= requireHere('nunjucks') as NunjucksModule);

export interface CompiledTemplate {
  /** Cost bounded by the template's length and its context (bounded.ts). */
  bounded: boolean;
  render(context: TemplateContext): string;
}

/** Filters whose first argument may be missing: it is what they replace. */
const LENIENT_FILTERS = new Set(['default', 'd']);
/** Tests whose subject may be missing: they ask whether it is. */
const LENIENT_TESTS = new Set(['defined', 'undefined']);

const UNSUPPORTED_TAGS: Record<string, string> = {
  Include: 'include',
  Extends: 'extends',
  Import: 'import',
  FromImport: 'from ... import',
};

/** Python's str and dict methods that Ansible templates call (`x.split()`, `d.items()`). */
const STRING_METHODS: Record<string, (s: string, ...args: any[]) => unknown> = {
  upper: (s) => s.toUpperCase(),
  lower: (s) => s.toLowerCase(),
  strip: (s, chars?: string) => (chars ? trimChars(s, chars, true, true) : s.trim()),
  lstrip: (s, chars?: string) => (chars ? trimChars(s, chars, true, false) : s.trimStart()),
  rstrip: (s, chars?: string) => (chars ? trimChars(s, chars, false, true) : s.trimEnd()),
  startswith: (s, prefix: string) => s.startsWith(prefix),
  endswith: (s, suffix: string) => s.endsWith(suffix),
  // JS replace() only replaces the first match; Python's replaces all (or `count`).
  replace: (s, old: string, by: string, count?: number) =>
    count === undefined ? s.split(old).join(by) : pythonSplit(s, old, count).join(by),
  split: (s, separator?: string, maxsplit?: number) => pythonSplit(s, separator, maxsplit),
  join: (s, items: unknown[]) => items.map(String).join(s),
  capitalize: (s) => s.charAt(0).toUpperCase() + s.slice(1).toLowerCase(),
};

const OBJECT_METHODS: Record<string, (o: Record<string, unknown>, ...args: any[]) => unknown> = {
  items: (o) => Object.entries(o),
  keys: (o) => Object.keys(o),
  values: (o) => Object.values(o),
  get: (o, key: string, fallback: unknown = null) => (Object.hasOwn(o, key) ? o[key] : fallback),
};

const BLOCKED_MEMBERS = new Set(['constructor', '__proto__', 'prototype', '__defineGetter__', '__lookupGetter__']);

function trimChars(s: string, chars: string, start: boolean, end: boolean): string {
  let from = 0;
  let to = s.length;
  while (start && from < to && chars.includes(s[from])) from++;
  while (end && to > from && chars.includes(s[to - 1])) to--;
  return s.slice(from, to);
}

function unknownVariable(path: string, line: number, column: number): TemplateError {
  return new TemplateError(
    'unknown_variable',
    `unknown template variable "${path}"`,
    { line, column },
    {
      variable: path,
      syntax: 'jinja',
    },
  );
}

function appendKey(path: string, key: unknown): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  const text = String(key);
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(text) ? `${path}.${text}` : `${path}[${JSON.stringify(text)}]`;
}

/**
 * The helpers compiled templates call, reached as `env.runnerStrict`. `pending` carries our own
 * error past nunjucks, which rewraps whatever a render throws into a plain Error.
 */
interface StrictRuntime {
  pending: TemplateError | undefined;
  symbol(context: NjContext, frame: NjRuntimeFrame, name: string, line: number, column: number): unknown;
  member(target: unknown, key: unknown, path: string, line: number, column: number): unknown;
  output(value: unknown): string;
}

function createStrictRuntime(): StrictRuntime {
  const runtime: StrictRuntime = {
    pending: undefined,
    symbol(context, frame, name, line, column) {
      const local = frame.lookup(name);
      if (local !== undefined) return local;
      if (Object.hasOwn(context.ctx, name)) {
        const value = context.ctx[name];
        if (value !== undefined) return value;
      } else if (Object.hasOwn(context.env.globals, name)) {
        return context.env.globals[name];
      }
      throw (runtime.pending = unknownVariable(name, line, column));
    },
    member(target, key, path, line, column) {
      const full = appendKey(path, key);
      if (target === undefined || target === null) {
        throw (runtime.pending = unknownVariable(full, line, column));
      }
      let value: unknown;
      if (
        typeof key === 'string' &&
        BLOCKED_MEMBERS.has(key) &&
        !(isPlainObject(target) && Object.hasOwn(target, key))
      ) {
        // `"".constructor.constructor(...)` would reach Function: a template only reads data.
        value = undefined;
      } else if (typeof target === 'string' || target instanceof String) {
        const method = Object.hasOwn(STRING_METHODS, String(key)) ? STRING_METHODS[String(key)] : undefined;
        if (method) return (...args: unknown[]) => method(String(target), ...args);
        value = (target as any)[key as string];
      } else if (isPlainObject(target)) {
        // Own keys only: `vars.constructor` is a typo, not Object.
        if (Object.hasOwn(target, key as string)) value = target[key as string];
        else if (Object.hasOwn(OBJECT_METHODS, String(key))) {
          const method = OBJECT_METHODS[String(key)];
          return (...args: unknown[]) => method(target, ...args);
        }
      } else if (Array.isArray(target) && typeof key === 'number' && key < 0) {
        value = target[target.length + key];
      } else {
        value = (target as any)[key as string];
      }
      if (value === undefined) throw (runtime.pending = unknownVariable(full, line, column));
      if (typeof value === 'function') return (...args: unknown[]) => value.apply(target, args);
      return value;
    },
    output(value) {
      if (value === undefined || value === null) return '';
      if (typeof value === 'string') return value;
      if (Array.isArray(value) || isPlainObject(value)) return JSON.stringify(value);
      return String(value);
    },
  };
  return runtime;
}

/** The path a lookup chain spells statically (`vars.list[0]`), or undefined when part is computed. */
function staticPath(node: NjNode): { root: NjNode; segments: (string | number)[] } | undefined {
  if (node.typename === 'Symbol') return { root: node, segments: [node.value] };
  if (node.typename === 'LookupVal' && node.val.typename === 'Literal') {
    const key = node.val.value;
    if (typeof key !== 'string' && typeof key !== 'number') return undefined;
    const inner = staticPath(node.target);
    return inner && { root: inner.root, segments: [...inner.segments, key] };
  }
  return undefined;
}

export function formatPath(segments: readonly (string | number)[]): string {
  let path = String(segments[0]);
  for (const segment of segments.slice(1)) path = appendKey(path, segment);
  return path;
}

/** The node whose position an error in a lookup chain reports: where the path starts. */
function chainRoot(node: NjNode): NjNode {
  return node.typename === 'LookupVal' ? chainRoot(node.target) : node;
}

function createCompilerClass(nunjucks: NunjucksModule, env: NjEnvironmentInternals) {
  const Base = nunjucks.compiler.Compiler;
  return class StrictCompiler extends Base {
    private lenient = new WeakSet<NjNode>();

    private markLenient(node: NjNode | undefined): void {
      if (!node) return;
      if (node.typename === 'Symbol' || node.typename === 'LookupVal') this.lenient.add(node);
      if (node.typename === 'LookupVal') this.markLenient(node.target);
    }

    override compileSymbol(node: NjNode, frame: NjFrame): void {
      if (frame.lookup(node.value) || this.lenient.has(node)) return super.compileSymbol(node, frame);
      this._emit(
        `env.runnerStrict.symbol(context, frame, ${JSON.stringify(node.value)}, ${node.lineno + 1}, ${node.colno + 1})`,
      );
    }

    override compileLookupVal(node: NjNode, frame: NjFrame): void {
      if (this.lenient.has(node)) return super.compileLookupVal(node, frame);
      const root = chainRoot(node);
      const targetPath = staticPath(node.target);
      const label = targetPath ? formatPath(targetPath.segments) : '(expression)';
      this._emit('env.runnerStrict.member((');
      this.compile(node.target, frame);
      this._emit('),');
      this.compile(node.val, frame);
      this._emit(`, ${JSON.stringify(label)}, ${root.lineno + 1}, ${root.colno + 1})`);
    }

    override compileFilter(node: NjNode, frame: NjFrame): void {
      const name: string = node.name.value;
      if (!Object.hasOwn(env.filters, name)) this.fail(`unknown filter "${name}"`, node.name.lineno, node.name.colno);
      if (LENIENT_FILTERS.has(name)) this.markLenient(node.args.children[0]);
      // Set the position first so that an error inside the filter is reported at the filter.
      this._emit(
        `(lineno = ${node.lineno}, colno = ${node.colno}, env.getFilter(${JSON.stringify(name)}).call(context, `,
      );
      this._compileAggregate(node.args, frame);
      this._emit('))');
    }

    override compileIs(node: NjNode, frame: NjFrame): void {
      const test: string = node.right.name ? node.right.name.value : node.right.value;
      if (!Object.hasOwn(env.tests, test)) this.fail(`unknown test "${test}"`, node.right.lineno, node.right.colno);
      if (LENIENT_TESTS.has(test)) this.markLenient(node.left);
      super.compileIs(node, frame);
    }

    override compileOutput(node: NjNode, frame: NjFrame): void {
      for (const child of node.children as NjNode[]) {
        if (child.typename === 'TemplateData') {
          if (child.value) {
            this._emit(`${this.buffer} += `);
            this.compileLiteral(child, frame);
            this._emitLine(';');
          }
        } else {
          this._emit(`${this.buffer} += env.runnerStrict.output(`);
          this.compile(child, frame);
          this._emitLine(');');
        }
      }
    }

    override compile(node: NjNode, frame?: NjFrame): void {
      const tag = UNSUPPORTED_TAGS[node.typename];
      if (tag) {
        this.fail(`{% ${tag} %} is not supported: a template must be self-contained`, node.lineno, node.colno);
      }
      super.compile(node, frame);
    }
  };
}

/** Position of the end of `source`, for errors nunjucks reports without one (end of input). */
function endOf(source: string): { line: number; column: number } {
  const lines = source.split('\n');
  return { line: lines.length, column: lines[lines.length - 1].length + 1 };
}

/** The reason of a nunjucks error without the `(path) [Line 1, Column 2]` prefix it may carry. */
function reasonOf(error: NjTemplateError): string {
  const cause = error.cause instanceof Error ? error.cause : undefined;
  const text = cause ? cause.message : error.message;
  return text.replace(/^\([^)]*\)(?: \[Line \d+(?:, Column \d+)?\])?\s*/, '').trim();
}

export interface JinjaEngine {
  /** Parses and compiles; throws TemplateError (kind `syntax`). */
  compile(source: string): CompiledTemplate;
  variables(source: string): TemplateVariable[];
}

/** nunjucks' `range` (Python's), counting its items against the rendering's budget first. */
function boundedRange(budget: { left: number }) {
  return (start: number, stop?: number, step?: number): number[] => {
    if (stop === undefined) [start, stop] = [0, start];
    const by = step || 1;
    const count = Math.max(0, Math.ceil((stop - start) / by));
    if (!Number.isFinite(count) || count > budget.left) {
      throw new Error(
        `range(${start}, ${stop}${step ? `, ${step}` : ''}) would make ${count} items; a template may make at most ${RANGE_ITEMS_PER_RENDERING} range items in one rendering (loops included)`,
      );
    }
    budget.left -= count;
    return Array.from({ length: count }, (_, i) => start + i * by);
  };
}

export function createJinjaEngine(): JinjaEngine {
  const nunjucks = loadNunjucks();
  // An empty loader list: nunjucks would otherwise read templates from ./views.
  const env = new nunjucks.Environment([], {
    autoescape: false,
    // Ansible's default: a block tag's own line break is dropped, so loops over lines of a script
    // do not leave blank lines behind.
    trimBlocks: true,
    lstripBlocks: false,
    throwOnUndefined: false,
    // Keeps nunjucks from replacing errors with a plain copy, so their line and column survive.
    dev: true,
  });
  for (const [name, filter] of Object.entries(extraFilters)) env.addFilter(name, filter);
  // Renderings are synchronous, so one budget per engine, reset at each rendering, is per rendering.
  const rangeBudget = { left: RANGE_ITEMS_PER_RENDERING };
  env.addGlobal('range', boundedRange(rangeBudget));
  // addTest exists since nunjucks 3.0; @types/nunjucks omits it.
  const withTests = env as unknown as { addTest(name: string, test: (...args: any[]) => boolean): void };
  for (const [name, test] of Object.entries(extraTests)) withTests.addTest(name, test);
  const internals = env as unknown as NjEnvironmentInternals;
  const strict = createStrictRuntime();
  (env as unknown as { runnerStrict: StrictRuntime }).runnerStrict = strict;
  const StrictCompiler = createCompilerClass(nunjucks, internals);

  function parse(source: string): NjNode {
    try {
      return nunjucks.parser.parse(source, internals.extensionsList, internals.opts);
    } catch (error) {
      throw syntaxError(error as NjTemplateError, source);
    }
  }

  function syntaxError(error: NjTemplateError, source: string): TemplateError {
    const position = error.lineno ? { line: error.lineno, column: error.colno ?? 1 } : endOf(source);
    return new TemplateError('syntax', reasonOf(error), position, { syntax: 'jinja', cause: error });
  }

  return {
    compile(source) {
      const ast = parse(source);
      let props: unknown;
      try {
        const compiler = new StrictCompiler('template', false);
        compiler.compile(ast);
        props = new Function(compiler.getCode())();
      } catch (error) {
        throw syntaxError(error as NjTemplateError, source);
      }
      const template = new nunjucks.Template({ type: 'code', obj: props }, env, 'template', true);
      return {
        bounded: jinjaIsBounded(ast),
        render(context) {
          strict.pending = undefined;
          rangeBudget.left = RANGE_ITEMS_PER_RENDERING;
          try {
            return template.render(context);
          } catch (error) {
            if (strict.pending) throw strict.pending;
            const e = error as NjTemplateError;
            // Render-time positions are the 0-based ones compiled into the code.
            const position = { line: (e.lineno ?? 0) + 1, column: (e.colno ?? 0) + 1 };
            throw new TemplateError('render', reasonOf(e), position, { syntax: 'jinja', cause: e.cause ?? e });
          } finally {
            strict.pending = undefined;
          }
        },
      };
    },
    variables(source) {
      return collectVariables(parse(source), new Set(Object.keys(internals.globals)));
    },
  };
}

/**
 * Walks the AST for context variables. Scopes follow Jinja closely enough for validation: `for`
 * and macro bodies see their own names; `set` binds for what follows in the enclosing block.
 */
function collectVariables(ast: NjNode, globals: ReadonlySet<string>): TemplateVariable[] {
  const found: TemplateVariable[] = [];

  const record = (root: NjNode, segments: (string | number)[], bound: Set<string>, optional: boolean) => {
    if (bound.has(String(segments[0]))) return;
    found.push({ path: formatPath(segments), segments, line: root.lineno + 1, column: root.colno + 1, optional });
  };

  const bindTargets = (target: NjNode | undefined, bound: Set<string>) => {
    if (!target) return;
    if (target.typename === 'Symbol') bound.add(target.value);
    for (const child of (target.children as NjNode[] | undefined) ?? []) bindTargets(child, bound);
  };

  const walkChildren = (node: NjNode, bound: Set<string>, optional: boolean) => {
    for (const field of node.fields) {
      const child = node[field];
      if (Array.isArray(child)) for (const c of child) walk(c, bound, optional);
      else if (child && typeof child === 'object' && 'typename' in child) walk(child, bound, optional);
    }
  };

  const walk = (node: NjNode | null | undefined, bound: Set<string>, optional: boolean): void => {
    if (!node || typeof node !== 'object' || !('typename' in node)) return;
    switch (node.typename) {
      case 'Symbol':
        if (!globals.has(node.value)) record(node, [node.value], bound, optional);
        return;
      case 'LookupVal': {
        const path = staticPath(node);
        if (path) return record(path.root, path.segments, bound, optional);
        walk(node.target, bound, optional);
        walk(node.val, bound, false);
        return;
      }
      case 'FunCall':
        // `x.split(',')`: the variable is `x`, not `x.split`.
        if (node.name.typename === 'LookupVal') walk(node.name.target, bound, optional);
        else walk(node.name, bound, optional);
        walk(node.args, bound, false);
        return;
      case 'Filter': {
        const args = node.args.children as NjNode[];
        const lenient = LENIENT_FILTERS.has(node.name.value);
        args.forEach((arg, i) => walk(arg, bound, lenient && i === 0 ? true : optional));
        return;
      }
      case 'Is': {
        const test: string = node.right.name ? node.right.name.value : node.right.value;
        walk(node.left, bound, optional || LENIENT_TESTS.has(test));
        if (node.right.args) walk(node.right.args, bound, optional);
        return;
      }
      case 'For':
      case 'AsyncEach':
      case 'AsyncAll': {
        walk(node.arr, bound, optional);
        const inner = new Set(bound);
        inner.add('loop');
        bindTargets(node.name, inner);
        walk(node.body, inner, optional);
        walk(node.else_, bound, optional);
        return;
      }
      case 'Macro':
      case 'Caller': {
        const inner = new Set(bound);
        inner.add('caller');
        for (const arg of node.args.children as NjNode[]) {
          if (arg.typename === 'Symbol') inner.add(arg.value);
          else if (arg.typename === 'KeywordArgs') {
            for (const pair of arg.children as NjNode[]) {
              inner.add(pair.key.value);
              walk(pair.value, bound, optional);
            }
          }
        }
        walk(node.body, inner, optional);
        if (node.typename === 'Macro') bindTargets(node.name, bound);
        return;
      }
      case 'Set':
        walk(node.value, bound, optional);
        walk(node.body, bound, optional);
        for (const target of node.targets as NjNode[]) bindTargets(target, bound);
        return;
      case 'Dict':
        // Keys written as bare names are literals, not variables.
        for (const pair of node.children as NjNode[]) {
          if (pair.key.typename !== 'Symbol') walk(pair.key, bound, optional);
          walk(pair.value, bound, optional);
        }
        return;
      case 'KeywordArgs':
        for (const pair of node.children as NjNode[]) walk(pair.value, bound, optional);
        return;
      default:
        walkChildren(node, bound, optional);
    }
  };

  walk(ast, new Set(), false);
  return found.sort((a, b) => a.line - b.line || a.column - b.column);
}
