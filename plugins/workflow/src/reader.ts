import { isAlias, isMap, isScalar, isSeq, type Alias, type Document, type Node, type Scalar, type YAMLMap } from 'yaml';
import { setOwn } from './objects.js';
import type { LineColumn, SourceText } from './source-map.js';
import type { WorkflowProblem } from './types.js';

/** A node as found in the document: null when a key has no value at all (`? key`). */
export type MaybeNode = Node | null;

/** One key of a mapping, after `<<` merge keys are expanded. */
export interface Entry {
  key: string;
  keyNode: Node;
  value: MaybeNode;
}

const SIMPLE_KEY = /^[A-Za-z0-9_-]+$/;

/** `tasks[1].retry` + `delay` → `tasks[1].retry.delay`; odd keys are quoted: `values["web 1"]`. */
export function keyPath(base: string, key: string): string {
  if (SIMPLE_KEY.test(key)) return base === '' ? key : `${base}.${key}`;
  return `${base}[${JSON.stringify(key)}]`;
}

export function indexPath(base: string, index: number): string {
  return `${base}[${index}]`;
}

/**
 * Conversions from YAML nodes, each reporting what is wrong at the node's position. A reader
 * keeps going after a problem so that one pass finds them all.
 */
export class Reader {
  readonly problems: WorkflowProblem[] = [];
  readonly warnings: WorkflowProblem[] = [];
  /** Nodes converted by `toPlain`, aliases counted each time: a bound against alias bombs. */
  private expanded = 0;
  private readonly entryCache = new Map<YAMLMap, Entry[]>();
  private readonly aliasCache = new Map<Alias, Node>();

  constructor(
    readonly file: string,
    readonly source: SourceText,
    private readonly doc: Document,
  ) {}

  position(node: MaybeNode | undefined, fallback?: MaybeNode): LineColumn {
    const range = node?.range ?? fallback?.range;
    return range ? this.source.position(range[0]) : { line: 1, column: 1 };
  }

  error(at: MaybeNode | LineColumn | undefined, path: string, message: string): void {
    this.problems.push(this.problem(at, path, message));
  }

  warn(at: MaybeNode | LineColumn | undefined, path: string, message: string): void {
    this.warnings.push(this.problem(at, path, message));
  }

  private problem(at: MaybeNode | LineColumn | undefined, path: string, message: string): WorkflowProblem {
    const pos = at && 'line' in at ? at : this.position(at as MaybeNode | undefined);
    return { file: this.file, line: pos.line, column: pos.column, path, message };
  }

  /**
   * Follows an alias to its anchored node. Returns undefined (after reporting) for an alias with no
   * anchor before it, which the YAML parser lets through.
   */
  resolve(node: MaybeNode, path: string): MaybeNode | undefined {
    let current: unknown = node;
    for (let hops = 0; isAlias(current); hops++) {
      // yaml's resolve() walks the document to find the anchor, so each alias is resolved once.
      let target = this.aliasCache.get(current);
      if (target === undefined && hops <= 100) {
        target = current.resolve(this.doc);
        if (target) this.aliasCache.set(current, target);
      }
      if (!target) {
        this.error(
          current,
          path,
          `${path || 'top level'}: unknown alias "*${current.source}" (no anchor &${current.source} before it)`,
        );
        return undefined;
      }
      current = target;
    }
    return current as MaybeNode;
  }

  /** `a list`, `the string "x"`, `the number 1.0`, `null`: what a type error says was found. */
  describe(node: MaybeNode): string {
    if (node === null) return 'nothing';
    if (isMap(node)) return 'a mapping';
    if (isSeq(node)) return 'a list';
    if (isScalar(node)) {
      const value = node.value;
      if (value === null || value === undefined) return 'null';
      if (typeof value === 'string') {
        const shown = value.length > 40 ? `${value.slice(0, 37)}...` : value;
        return `the string ${JSON.stringify(shown)}`;
      }
      if (typeof value === 'number' || typeof value === 'bigint') {
        return `the number ${node.type === 'PLAIN' && node.source ? node.source : String(value)}`;
      }
      if (typeof value === 'boolean') return `the boolean ${value}`;
      return `a ${typeof value}`;
    }
    return 'an unsupported YAML node';
  }

  /** Reports `path: expected <what>, found <describe>` at the node. */
  typeError(node: MaybeNode, at: MaybeNode, path: string, expected: string, hint = ''): void {
    this.error(node ?? at, path, `${path || 'top level'}: expected ${expected}, found ${this.describe(node)}${hint}`);
  }

  /** The text of a scalar key; reports keys that are mappings, lists or empty. */
  keyText(keyNode: unknown, path: string): string | undefined {
    const key = isAlias(keyNode) ? this.resolve(keyNode, path) : (keyNode as MaybeNode);
    if (isScalar(key) && key.value !== null && key.value !== undefined) {
      return typeof key.value === 'string' ? key.value : (key.source ?? String(key.value));
    }
    this.error(
      key,
      path,
      `${path === '' ? 'top level' : path}: a key must be a string, found ${this.describe(key ?? null)}`,
    );
    return undefined;
  }

  /**
   * The entries of a mapping. A YAML merge key (`<<: *defaults`, or a list of aliases) adds the
   * anchored mapping's entries that the mapping does not set itself; among several merged
   * mappings the first wins, as YAML's merge key type says.
   */
  entries(map: YAMLMap, path: string, seen: Set<YAMLMap> = new Set()): Entry[] {
    // Computed once per mapping: nested merges of repeated aliases would otherwise grow
    // exponentially, and a problem in a shared mapping is reported once.
    const cached = this.entryCache.get(map);
    if (cached) return cached;
    seen.add(map);
    const own: Entry[] = [];
    const merged: Entry[] = [];
    for (const pair of map.items) {
      const keyNode = pair.key as Node;
      if (isScalar(keyNode) && typeof keyNode.value === 'symbol') {
        const sources = this.resolve(pair.value as MaybeNode, path);
        const list = isSeq(sources) ? sources.items.map((n) => this.resolve(n as MaybeNode, path)) : [sources];
        for (const source of list) {
          if (source === undefined) continue;
          if (!isMap(source)) {
            this.error(
              source ?? keyNode,
              path,
              `${path || 'top level'}: << must merge a mapping (an alias such as *defaults), found ${this.describe(source)}`,
            );
          } else if (seen.has(source)) {
            this.error(keyNode, path, `${path || 'top level'}: << merges a mapping into itself`);
          } else {
            merged.push(...this.entries(source, path, seen));
          }
        }
        continue;
      }
      const key = this.keyText(keyNode, path);
      if (key !== undefined) own.push({ key, keyNode, value: (pair.value as MaybeNode) ?? null });
    }
    seen.delete(map);
    const out = [...own];
    const taken = new Set(own.map((e) => e.key));
    for (const entry of merged) {
      if (taken.has(entry.key)) continue;
      taken.add(entry.key);
      out.push(entry);
    }
    this.entryCache.set(map, out);
    return out;
  }

  /**
   * Plain data from a node (for `values` and loop items): mappings become objects, lists arrays,
   * scalars their values. Reports and returns undefined for aliases that loop back into
   * themselves or expand past a bound.
   */
  toPlain(node: MaybeNode, path: string, stack: Set<Node> = new Set()): { value: unknown } | undefined {
    if (++this.expanded > 100_000) {
      if (this.expanded === 100_001) this.error(node, path, `${path}: too many nodes after expanding aliases`);
      return undefined;
    }
    const resolved = this.resolve(node, path);
    if (resolved === undefined) return undefined;
    if (resolved === null) return { value: null };
    if (stack.has(resolved)) {
      this.error(node, path, `${path}: an alias refers to a node that contains it`);
      return undefined;
    }
    if (isScalar(resolved)) return { value: (resolved as Scalar).value ?? null };
    stack.add(resolved);
    try {
      if (isSeq(resolved)) {
        const out: unknown[] = [];
        for (const [i, item] of resolved.items.entries()) {
          const v = this.toPlain(item as MaybeNode, indexPath(path, i), stack);
          if (v === undefined) return undefined;
          out.push(v.value);
        }
        return { value: out };
      }
      if (isMap(resolved)) {
        // A plain object (setOwn keeps `__proto__` an entry): data maps can be many (aliases), and
        // V8 builds plain objects much faster than prototype-less ones. Maps looked up by user
        // keys (values by agent, vars, groups) are made without a prototype by their owners.
        const out: Record<string, unknown> = {};
        for (const entry of this.entries(resolved, path)) {
          const v = this.toPlain(entry.value, keyPath(path, entry.key), stack);
          if (v === undefined) return undefined;
          setOwn(out, entry.key, v.value);
        }
        return { value: out };
      }
      this.error(resolved, path, `${path}: unsupported YAML node`);
      return undefined;
    } finally {
      stack.delete(resolved);
    }
  }
}
