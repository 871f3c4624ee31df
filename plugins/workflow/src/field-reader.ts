import { isRunnerError } from '@runner/plugin-sdk';
import { isMap, isScalar, isSeq, type Scalar, type YAMLMap } from 'yaml';
import { parseDuration } from './duration.js';
import { oneOf } from './names.js';
import { indexPath, keyPath, type Entry, type MaybeNode, type Reader } from './reader.js';
import { didYouMean } from '@runner/plugin-sdk';
import type { TemplateEngine } from './types.js';
import type { NameRef } from './schema-types.js';

/**
 * The typed readers every part of the workflow schema is built from: keys of a mapping, required
 * keys, strings, choices, numbers, durations, lists of names. Each reports a problem at the node
 * where it is, through the Reader, and returns undefined instead of throwing.
 */
export class FieldReader {
  /** The template syntax of the file (`template:`), read before the tasks. */
  protected template: TemplateEngine = 'jinja';

  constructor(protected readonly r: Reader) {}

  protected checkKeys(entries: Entry[], parent: string, known: readonly string[], hints: Record<string, string> = {}) {
    for (const entry of entries) {
      if (known.includes(entry.key)) continue;
      const hint = hints[entry.key] ?? (didYouMean(entry.key, known) || ` (known keys: ${known.join(', ')})`);
      const what = parent === '' ? `unknown top-level key "${entry.key}"` : `${parent}: unknown key "${entry.key}"`;
      this.r.error(entry.keyNode, keyPath(parent, entry.key), `${what}${hint}`);
    }
  }

  protected required(
    entries: Map<string, Entry>,
    key: string,
    map: MaybeNode,
    parent: string,
    example = '',
  ): Entry | undefined {
    const entry = entries.get(key);
    if (!entry) {
      const prefix = parent === '' ? '' : `${parent}: `;
      this.r.error(map, keyPath(parent, key), `${prefix}missing required key "${key}"${example}`);
    }
    return entry;
  }

  protected mapping(node: MaybeNode, path: string, expected: string): YAMLMap | undefined {
    const n = this.r.resolve(node, path);
    if (n === undefined) return undefined;
    if (!isMap(n)) {
      this.r.typeError(n, node, path, expected);
      return undefined;
    }
    return n;
  }

  protected index(entries: Entry[]): Map<string, Entry> {
    return new Map(entries.map((e) => [e.key, e]));
  }

  /** A string scalar; undefined (reported) for anything else. */
  protected string(node: MaybeNode, path: string, expected = 'a string'): { value: string; node: Scalar } | undefined {
    const n = this.r.resolve(node, path);
    if (n === undefined) return undefined;
    if (isScalar(n) && typeof n.value === 'string') return { value: n.value, node: n };
    this.r.typeError(n, node, path, expected);
    return undefined;
  }

  protected nonEmptyString(node: MaybeNode, path: string, expected: string, emptyMessage: string) {
    const s = this.string(node, path, expected);
    if (s && s.value.trim() === '') {
      this.r.error(s.node, path, `${path}: ${emptyMessage}`);
      return undefined;
    }
    return s;
  }

  protected choice<T extends string>(
    node: MaybeNode,
    path: string,
    choices: readonly T[],
    expected = oneOf(choices),
  ): T | undefined {
    const n = this.r.resolve(node, path);
    if (n === undefined) return undefined;
    if (isScalar(n) && typeof n.value === 'string' && (choices as readonly string[]).includes(n.value)) {
      return n.value as T;
    }
    const near = isScalar(n) && typeof n.value === 'string' ? didYouMean(n.value, choices) : '';
    this.r.error(n ?? node, path, `${path}: expected ${expected}, found ${this.r.describe(n)}${near}`);
    return undefined;
  }

  protected boolean(node: MaybeNode, path: string): boolean | undefined {
    const n = this.r.resolve(node, path);
    if (n === undefined) return undefined;
    if (isScalar(n) && typeof n.value === 'boolean') return n.value;
    this.r.typeError(n, node, path, 'true or false');
    return undefined;
  }

  protected number(node: MaybeNode, path: string, min: number, integer: boolean): number | undefined {
    const n = this.r.resolve(node, path);
    if (n === undefined) return undefined;
    if (isScalar(n) && typeof n.value === 'number' && n.value >= min && (!integer || Number.isInteger(n.value))) {
      return n.value;
    }
    this.r.typeError(n, node, path, `${integer ? 'an integer' : 'a number'} of at least ${min}`);
    return undefined;
  }

  /**
   * A memory size in bytes: `256MiB`, `1GiB`, `512 KiB`, or a whole number of MiB (as the
   * `engine.memory_limit` setting); at least `minMiB`.
   */
  protected byteSize(node: MaybeNode, path: string, minMiB: number): number | undefined {
    const n = this.r.resolve(node, path);
    if (n === undefined) return undefined;
    const units: Record<string, number> = { kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 };
    let bytes: number | undefined;
    if (isScalar(n) && typeof n.value === 'number' && Number.isInteger(n.value)) bytes = n.value * units.mib;
    else if (isScalar(n) && typeof n.value === 'string') {
      const match = /^\s*(\d+(?:\.\d+)?)\s*(KiB|MiB|GiB)\s*$/i.exec(n.value);
      if (match) bytes = Math.round(Number(match[1]) * units[match[2].toLowerCase()]);
    }
    if (bytes === undefined) {
      this.r.typeError(n, node, path, 'a size such as 256MiB or 1GiB (or a whole number of MiB)');
      return undefined;
    }
    if (bytes < minMiB * units.mib) {
      this.r.error(n, path, `${path}: must be at least ${minMiB}MiB`);
      return undefined;
    }
    return bytes;
  }

  /** A duration string or a number of seconds; `positive` refuses zero. */
  protected duration(node: MaybeNode, path: string, positive: boolean): number | undefined {
    const n = this.r.resolve(node, path);
    if (n === undefined) return undefined;
    if (!isScalar(n) || (typeof n.value !== 'string' && typeof n.value !== 'number')) {
      this.r.typeError(n, node, path, 'a duration such as "30s"');
      return undefined;
    }
    let ms: number;
    try {
      ms = parseDuration(n.value);
    } catch (error) {
      if (!isRunnerError(error)) throw error;
      this.r.error(n, path, `${path}: ${error.message}`);
      return undefined;
    }
    if (positive && ms === 0) {
      this.r.error(n, path, `${path}: must be longer than 0`);
      return undefined;
    }
    return ms;
  }

  /**
   * A list of non-empty strings, or with `allowString` also a lone string (a one-item list). A
   * name listed twice is a warning and kept once.
   */
  protected names(
    node: MaybeNode,
    path: string,
    expected: string,
    what: string,
    allowString: boolean,
  ): NameRef[] | undefined {
    const n = this.r.resolve(node, path);
    if (n === undefined) return undefined;
    if (allowString && isScalar(n) && typeof n.value === 'string') {
      if (n.value.trim() === '') {
        this.r.error(n, path, `${path}: expected ${what}, found an empty string`);
        return undefined;
      }
      return [{ name: n.value, node: n, path }];
    }
    if (!isSeq(n)) {
      this.r.typeError(n, node, path, expected);
      return undefined;
    }
    const out: NameRef[] = [];
    const seen = new Set<string>();
    n.items.forEach((item, i) => {
      const itemPath = indexPath(path, i);
      const s = this.nonEmptyString(item as MaybeNode, itemPath, what, `expected ${what}, found an empty string`);
      if (!s) return;
      if (seen.has(s.value)) {
        this.r.warn(s.node, itemPath, `${itemPath}: "${s.value}" is listed twice`);
        return;
      }
      seen.add(s.value);
      out.push({ name: s.value, node: s.node, path: itemPath });
    });
    return out;
  }
}
