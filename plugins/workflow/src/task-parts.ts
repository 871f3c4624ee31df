import { isMap, isScalar, isSeq, type Scalar } from 'yaml';
import { formatDuration } from './duration.js';
import { DELEGATION_KEYS, DELEGATION_STRATEGIES, EXEC_KEYS, RETRY_KEYS } from './names.js';
import { indexPath, keyPath, type MaybeNode } from './reader.js';
import { hasTemplateTag } from './template-syntax.js';
import type { Delegation, LoopItem, RetryPolicy } from './types.js';
import { FieldReader } from './field-reader.js';
import type { TaskDraft } from './schema-types.js';
import { DEFAULT_RETRY_BACKOFF, DEFAULT_RETRY_DELAY_MS } from './schema-types.js';

/** Constants a `when` may be without a template: `when: false` turns a task off. */
const WHEN_CONSTANTS = ['true', 'false', 'yes', 'no', 'on', 'off', '1', '0'];

/** Reads the parts of a task: its script, `when`, `retry`, `loop` and `delegate_to`. */
export class TaskPartsReader extends FieldReader {
  protected site(task: TaskDraft, node: Scalar, path: string, value: string, inIteration: boolean): void {
    if (hasTemplateTag(value, this.template)) task.templates.push({ path, node, value, inIteration });
  }

  protected exec(task: TaskDraft, node: MaybeNode, path: string): void {
    const map = this.mapping(node, path, 'a mapping with a script key (exec: { script: ... })');
    if (!map) return;
    const entries = this.r.entries(map, path);
    this.checkKeys(entries, path, EXEC_KEYS);
    const script = this.required(this.index(entries), 'script', map, path);
    if (!script) return;
    const s = this.string(script.value, `${path}.script`, 'a string (a Lua script)');
    if (!s) return;
    if (s.value.trim() === '') {
      this.r.error(s.node, `${path}.script`, `${path}.script: the script is empty`);
      return;
    }
    task.script = s;
    this.site(task, s.node, `${path}.script`, s.value, true);
  }

  /** A `when`: a template, a YAML boolean, or one of the constants. */
  protected condition(task: TaskDraft, node: MaybeNode, path: string): string | undefined {
    const n = this.r.resolve(node, path);
    if (n === undefined) return undefined;
    if (isScalar(n) && typeof n.value === 'boolean') return String(n.value);
    const s = this.string(n, path, 'a template such as "{{ vars.enabled }}" or true/false');
    if (!s) return undefined;
    if (hasTemplateTag(s.value, this.template)) {
      this.site(task, s.node, path, s.value, true);
      return s.value;
    }
    if (WHEN_CONSTANTS.includes(s.value.trim().toLowerCase())) return s.value;
    // `when: vars.x == 'y'` (Ansible's style) would otherwise render to itself: always true.
    this.r.error(
      s.node,
      path,
      `${path}: ${JSON.stringify(s.value)} is not a template, so it would always be true; ` +
        `write the condition inside {{ }}, e.g. "{{ ${s.value} }}"`,
    );
    return undefined;
  }

  protected retry(node: MaybeNode, path: string): RetryPolicy | undefined {
    const n = this.r.resolve(node, path);
    if (n === undefined) return undefined;
    if (isScalar(n) && typeof n.value === 'number') {
      const attempts = this.number(n, path, 1, true);
      return attempts === undefined
        ? undefined
        : { attempts, delayMs: DEFAULT_RETRY_DELAY_MS, backoff: DEFAULT_RETRY_BACKOFF };
    }
    if (!isMap(n)) {
      this.r.typeError(n, node, path, 'a number of attempts or a mapping with attempts, delay, backoff, max_delay');
      return undefined;
    }
    const entries = this.r.entries(n, path);
    this.checkKeys(entries, path, RETRY_KEYS);
    const e = this.index(entries);
    const attemptsEntry = this.required(e, 'attempts', n, path);
    const attempts = attemptsEntry ? this.number(attemptsEntry.value, `${path}.attempts`, 1, true) : undefined;
    const delayEntry = e.get('delay');
    const delayMs = delayEntry ? this.duration(delayEntry.value, `${path}.delay`, false) : DEFAULT_RETRY_DELAY_MS;
    const backoffEntry = e.get('backoff');
    const backoff = backoffEntry ? this.number(backoffEntry.value, `${path}.backoff`, 1, false) : DEFAULT_RETRY_BACKOFF;
    const maxEntry = e.get('max_delay');
    const maxDelayMs = maxEntry ? this.duration(maxEntry.value, `${path}.max_delay`, true) : undefined;
    if (maxEntry && maxDelayMs !== undefined && delayMs !== undefined && maxDelayMs < delayMs) {
      this.r.error(
        maxEntry.value,
        `${path}.max_delay`,
        `${path}.max_delay: ${formatDuration(maxDelayMs)} is shorter than delay (${formatDuration(delayMs)})`,
      );
      return undefined;
    }
    if (
      attempts === undefined ||
      delayMs === undefined ||
      backoff === undefined ||
      (maxEntry && maxDelayMs === undefined)
    ) {
      return undefined;
    }
    return maxDelayMs === undefined ? { attempts, delayMs, backoff } : { attempts, delayMs, backoff, maxDelayMs };
  }

  protected loop(task: TaskDraft, node: MaybeNode, path: string): LoopItem[] | string | undefined {
    const n = this.r.resolve(node, path);
    if (n === undefined) return undefined;
    const expected = 'a list or a template that renders to a list (e.g. "{{ vars.hosts }}")';
    if (isScalar(n) && typeof n.value === 'string') {
      if (!hasTemplateTag(n.value, this.template)) {
        this.r.typeError(n, node, path, expected, '; for one item write a list: ["..."]');
        return undefined;
      }
      this.site(task, n, path, n.value, false);
      return n.value;
    }
    if (!isSeq(n)) {
      this.r.typeError(n, node, path, expected);
      return undefined;
    }
    if (n.items.length === 0) this.r.warn(n, path, `${path}: the list is empty, so the task never runs`);
    const items: LoopItem[] = [];
    let ok = true;
    n.items.forEach((raw, i) => {
      const itemPath = indexPath(path, i);
      const item = this.r.resolve(raw as MaybeNode, itemPath);
      if (item === undefined) {
        ok = false;
        return;
      }
      const isValue = isScalar(item) && ['string', 'number', 'boolean'].includes(typeof item.value);
      if (!isValue && !isMap(item)) {
        this.r.typeError(item, raw as MaybeNode, itemPath, 'a scalar or a mapping');
        ok = false;
        return;
      }
      // toPlain first: it bounds alias expansion, which the template walk then stays within.
      const plain = this.r.toPlain(item, itemPath);
      if (!plain) {
        ok = false;
        return;
      }
      items.push(plain.value as LoopItem);
      this.loopTemplates(task, item, itemPath, 0);
    });
    return ok ? items : undefined;
  }

  /** Strings anywhere inside a loop item are templates, rendered before the first iteration. */
  protected loopTemplates(task: TaskDraft, node: MaybeNode, path: string, depth: number): void {
    if (depth > 20 || node === null) return;
    const n = this.r.resolve(node, path);
    if (!n) return;
    if (isScalar(n)) {
      if (typeof n.value === 'string') this.site(task, n, path, n.value, false);
    } else if (isSeq(n)) {
      n.items.forEach((item, i) => this.loopTemplates(task, item as MaybeNode, indexPath(path, i), depth + 1));
    } else if (isMap(n)) {
      for (const entry of this.r.entries(n, path)) {
        this.loopTemplates(task, entry.value, keyPath(path, entry.key), depth + 1);
      }
    }
  }

  protected delegation(task: TaskDraft, node: MaybeNode, path: string): Delegation | undefined {
    const n = this.r.resolve(node, path);
    if (n === undefined) return undefined;
    const conditionalHint = `write delegation: { strategy: conditional, when: "{{ agent.cpu_usage < 80 }}" }`;
    if (isScalar(n) && n.value === 'conditional') {
      this.r.error(n, path, `${path}: conditional needs a condition: ${conditionalHint}`);
      return undefined;
    }
    if (!isMap(n)) {
      const simple = DELEGATION_STRATEGIES.filter((s) => s !== 'conditional');
      const strategy = this.choice(
        n,
        path,
        simple,
        '"all", "round_robin", "failover" or a mapping with strategy and when',
      );
      return strategy === undefined ? undefined : ({ strategy } as Delegation);
    }
    const entries = this.r.entries(n, path);
    this.checkKeys(entries, path, DELEGATION_KEYS);
    const e = this.index(entries);
    const strategyEntry = this.required(e, 'strategy', n, path);
    const strategy = strategyEntry
      ? this.choice(strategyEntry.value, `${path}.strategy`, DELEGATION_STRATEGIES)
      : undefined;
    const whenEntry = e.get('when');
    if (strategy === undefined) return undefined;
    if (strategy !== 'conditional') {
      if (whenEntry) {
        this.r.error(
          whenEntry.keyNode,
          `${path}.when`,
          `${path}.when: only strategy conditional takes a when condition`,
        );
        return undefined;
      }
      return { strategy } as Delegation;
    }
    if (!whenEntry) {
      this.r.error(
        n,
        `${path}.when`,
        `${path}: strategy conditional needs a when condition, e.g. when: "{{ agent.cpu_usage < 80 }}"`,
      );
      return undefined;
    }
    const when = this.condition(task, whenEntry.value, `${path}.when`);
    return when === undefined ? undefined : { strategy: 'conditional', when };
  }
}
