import { didYouMean, isRunnerError } from '@runner/plugin-sdk';
import { isMap, isScalar, isSeq, type Node, type Scalar, type YAMLMap } from 'yaml';
import { formatDuration, parseDuration } from './duration.js';
import {
  DELEGATION_KEYS,
  DELEGATION_STRATEGIES,
  DRY_RUN_MODES,
  EXEC_KEYS,
  oneOf,
  RETRY_KEYS,
  TASK_KEYS,
  TASK_NAME,
  TASK_NAME_RULE,
  TEMPLATE_ENGINES,
  VAR_NAME,
  VAR_NAME_RULE,
  WORKFLOW_KEYS,
} from './names.js';
import { setOwn } from './objects.js';
import { indexPath, keyPath, type Entry, type MaybeNode, type Reader } from './reader.js';
import { hasTemplateTag } from './template-syntax.js';
import type { Delegation, LoopItem, RetryPolicy, TemplateEngine, ValuesMap } from './types.js';

/** A string that is rendered as a template before use. */
export interface TemplateSite {
  path: string;
  node: Scalar;
  value: string;
  /** False where `item` and `loop_index` do not exist yet: the `loop` field itself. */
  inIteration: boolean;
}

/** A name written in the file, with where it is written. */
export interface NameRef {
  name: string;
  node: Node;
  path: string;
}

/** A task as read, before the graph checks; fields are absent where the file had a problem. */
export interface TaskDraft {
  index: number;
  path: string;
  node: YAMLMap;
  name?: string;
  nameNode?: Node;
  deps: NameRef[];
  /** The task has a `loop` key (valid or not), so `item` exists in its iterations. */
  hasLoop: boolean;
  script?: { value: string; node: Scalar };
  when?: string;
  retry?: RetryPolicy;
  timeoutMs?: number;
  loop?: LoopItem[] | string;
  delegateTo?: string[];
  delegation: Delegation;
  dryRun: 'skip' | 'run';
  ignoreErrors: boolean;
  templates: TemplateSite[];
}

export interface WorkflowDraft {
  version?: string;
  description?: string;
  template: TemplateEngine;
  parallel: number;
  vars: Record<string, string>;
  groups: { name: string; members: NameRef[] }[];
  tasks: TaskDraft[];
  values: ValuesMap;
}

/** Values a task field falls back to; the reference documents each. */
export const DEFAULT_RETRY_DELAY_MS = 1000;
export const DEFAULT_RETRY_BACKOFF = 1;

/** Constants a `when` may be without a template: `when: false` turns a task off. */
const WHEN_CONSTANTS = ['true', 'false', 'yes', 'no', 'on', 'off', '1', '0'];

const KEY_HINTS: Record<string, Record<string, string>> = {
  task: { script: ' (a script goes under exec: write exec: { script: ... })' },
  workflow: { name: ' (a workflow is named by the command line or the saved flow, not in the file)' },
};

/** Reads a workflow document's keys and types; the graph and template checks come after. */
export class WorkflowSchema {
  private template: TemplateEngine = 'jinja';

  constructor(private readonly r: Reader) {}

  // ---- generic readers --------------------------------------------------------------------

  private checkKeys(entries: Entry[], parent: string, known: readonly string[], hints: Record<string, string> = {}) {
    for (const entry of entries) {
      if (known.includes(entry.key)) continue;
      const hint = hints[entry.key] ?? (didYouMean(entry.key, known) || ` (known keys: ${known.join(', ')})`);
      const what = parent === '' ? `unknown top-level key "${entry.key}"` : `${parent}: unknown key "${entry.key}"`;
      this.r.error(entry.keyNode, keyPath(parent, entry.key), `${what}${hint}`);
    }
  }

  private required(
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

  private mapping(node: MaybeNode, path: string, expected: string): YAMLMap | undefined {
    const n = this.r.resolve(node, path);
    if (n === undefined) return undefined;
    if (!isMap(n)) {
      this.r.typeError(n, node, path, expected);
      return undefined;
    }
    return n;
  }

  private index(entries: Entry[]): Map<string, Entry> {
    return new Map(entries.map((e) => [e.key, e]));
  }

  /** A string scalar; undefined (reported) for anything else. */
  private string(node: MaybeNode, path: string, expected = 'a string'): { value: string; node: Scalar } | undefined {
    const n = this.r.resolve(node, path);
    if (n === undefined) return undefined;
    if (isScalar(n) && typeof n.value === 'string') return { value: n.value, node: n };
    this.r.typeError(n, node, path, expected);
    return undefined;
  }

  private nonEmptyString(node: MaybeNode, path: string, expected: string, emptyMessage: string) {
    const s = this.string(node, path, expected);
    if (s && s.value.trim() === '') {
      this.r.error(s.node, path, `${path}: ${emptyMessage}`);
      return undefined;
    }
    return s;
  }

  private choice<T extends string>(
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

  private boolean(node: MaybeNode, path: string): boolean | undefined {
    const n = this.r.resolve(node, path);
    if (n === undefined) return undefined;
    if (isScalar(n) && typeof n.value === 'boolean') return n.value;
    this.r.typeError(n, node, path, 'true or false');
    return undefined;
  }

  private number(node: MaybeNode, path: string, min: number, integer: boolean): number | undefined {
    const n = this.r.resolve(node, path);
    if (n === undefined) return undefined;
    if (isScalar(n) && typeof n.value === 'number' && n.value >= min && (!integer || Number.isInteger(n.value))) {
      return n.value;
    }
    this.r.typeError(n, node, path, `${integer ? 'an integer' : 'a number'} of at least ${min}`);
    return undefined;
  }

  /** A duration string or a number of seconds; `positive` refuses zero. */
  private duration(node: MaybeNode, path: string, positive: boolean): number | undefined {
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
  private names(
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

  // ---- the workflow -----------------------------------------------------------------------

  read(root: MaybeNode): WorkflowDraft {
    const draft: WorkflowDraft = { template: 'jinja', parallel: 1, vars: {}, groups: [], tasks: [], values: {} };
    const top = this.r.resolve(root, '');
    if (top === undefined) return draft;
    if (top === null || (isScalar(top) && (top.value === null || top.value === undefined))) {
      this.r.error({ line: 1, column: 1 }, '', 'the file is empty: a workflow needs at least version and tasks');
      return draft;
    }
    if (!isMap(top)) {
      this.r.error(
        top,
        '',
        `expected a mapping of workflow keys (version, tasks, ...) at the top level, found ${this.r.describe(top)}`,
      );
      return draft;
    }
    const entries = this.r.entries(top, '');
    this.checkKeys(entries, '', WORKFLOW_KEYS, KEY_HINTS.workflow);
    const e = this.index(entries);

    const version = this.required(e, 'version', top, '', ' (e.g. version: "1.0")');
    if (version) draft.version = this.version(version.value);
    const description = e.get('description');
    if (description) draft.description = this.string(description.value, 'description')?.value;
    const template = e.get('template');
    // Read before the tasks: whether a `when` holds a template depends on the engine's syntax.
    if (template) this.template = draft.template = this.choice(template.value, 'template', TEMPLATE_ENGINES) ?? 'jinja';
    const parallel = e.get('parallel');
    if (parallel) draft.parallel = this.number(parallel.value, 'parallel', 1, true) ?? 1;
    const vars = e.get('vars');
    if (vars) draft.vars = this.vars(vars.value);
    const groups = e.get('groups');
    if (groups) draft.groups = this.groups(groups.value);
    const values = e.get('values');
    if (values) draft.values = this.values(values.value, 'values');
    const tasks = this.required(e, 'tasks', top, '');
    if (tasks) draft.tasks = this.tasks(tasks.value);
    return draft;
  }

  private version(node: MaybeNode): string | undefined {
    const n = this.r.resolve(node, 'version');
    if (n === undefined) return undefined;
    if (isScalar(n) && typeof n.value === 'number') {
      // YAML reads 1.0 as the number 1; quoting keeps what the author wrote.
      const written = n.source || String(n.value);
      this.r.error(
        n,
        'version',
        `version: expected a string, found the number ${written}; quote it: version: "${written}"`,
      );
      return undefined;
    }
    const s = this.string(n, 'version', 'a string such as "1.0"');
    if (!s) return undefined;
    const match = /^(\d+)(\.\d+){0,2}$/.exec(s.value.trim());
    if (!match) {
      this.r.error(s.node, 'version', `version: invalid version "${s.value}": expected a version number such as "1.0"`);
      return undefined;
    }
    if (Number(match[1]) !== 1) {
      this.r.error(
        s.node,
        'version',
        `version: unsupported version "${s.value}": this runner reads version 1 workflows (such as "1.0")`,
      );
      return undefined;
    }
    return s.value.trim();
  }

  private vars(node: MaybeNode): Record<string, string> {
    const out: Record<string, string> = {};
    const map = this.mapping(node, 'vars', 'a mapping of variable names to strings');
    if (!map) return out;
    for (const entry of this.r.entries(map, 'vars')) {
      const path = keyPath('vars', entry.key);
      if (!VAR_NAME.test(entry.key)) {
        this.r.error(entry.keyNode, path, `vars: "${entry.key}" is not a valid variable name (${VAR_NAME_RULE})`);
        continue;
      }
      const n = this.r.resolve(entry.value, path);
      if (n === undefined) continue;
      // Vars are strings; a number or boolean is taken as written (`8080`, `1.50`, `true`).
      if (isScalar(n) && (typeof n.value === 'string' || typeof n.value === 'number' || typeof n.value === 'boolean')) {
        const text =
          typeof n.value === 'string' ? n.value : n.type === 'PLAIN' && n.source ? n.source : String(n.value);
        setOwn(out, entry.key, text);
      } else {
        const hint = isScalar(n) ? ' (write "" for an empty value)' : '';
        this.r.typeError(n, entry.value ?? entry.keyNode, path, 'a string', hint);
      }
    }
    return out;
  }

  private groups(node: MaybeNode): WorkflowDraft['groups'] {
    const out: WorkflowDraft['groups'] = [];
    const map = this.mapping(node, 'groups', 'a mapping of group names to lists of task names');
    if (!map) return out;
    for (const entry of this.r.entries(map, 'groups')) {
      const path = keyPath('groups', entry.key);
      if (!TASK_NAME.test(entry.key)) {
        this.r.error(entry.keyNode, path, `groups: "${entry.key}" is not a valid group name (${TASK_NAME_RULE})`);
        continue;
      }
      const members = this.names(entry.value ?? null, path, 'a list of task names', 'a task name', false);
      if (!members) continue;
      if (members.length === 0) {
        this.r.error(entry.value ?? entry.keyNode, path, `${path}: a group needs at least one task`);
        continue;
      }
      out.push({ name: entry.key, members });
    }
    return out;
  }

  /** `values` of a workflow, or the whole of a `--values` file (`base` = ''). */
  values(node: MaybeNode, base: string): ValuesMap {
    const out: ValuesMap = {};
    const map = this.mapping(node, base, 'a mapping of agent names to mappings of values');
    if (!map) return out;
    for (const entry of this.r.entries(map, base)) {
      const path = keyPath(base, entry.key);
      const agent = this.mapping(entry.value, path, 'a mapping of values');
      if (!agent) continue;
      const plain = this.r.toPlain(agent, path);
      if (plain) setOwn(out, entry.key, plain.value as Record<string, unknown>);
    }
    return out;
  }

  private tasks(node: MaybeNode): TaskDraft[] {
    const n = this.r.resolve(node, 'tasks');
    if (n === undefined) return [];
    if (!isSeq(n)) {
      this.r.typeError(n, node, 'tasks', 'a list of tasks');
      return [];
    }
    if (n.items.length === 0) {
      this.r.error(n, 'tasks', 'tasks: a workflow needs at least one task');
      return [];
    }
    const out: TaskDraft[] = [];
    n.items.forEach((item, index) => {
      const path = indexPath('tasks', index);
      const map = this.mapping(item as MaybeNode, path, 'a mapping (a task with name and exec)');
      if (map) out.push(this.task(map, index, path));
    });
    return out;
  }

  // ---- a task -----------------------------------------------------------------------------

  private task(map: YAMLMap, index: number, path: string): TaskDraft {
    const task: TaskDraft = {
      index,
      path,
      node: map,
      deps: [],
      hasLoop: false,
      delegation: { strategy: 'all' },
      dryRun: 'skip',
      ignoreErrors: false,
      templates: [],
    };
    const entries = this.r.entries(map, path);
    this.checkKeys(entries, path, TASK_KEYS, KEY_HINTS.task);
    const e = this.index(entries);
    const at = (key: string) => keyPath(path, key);
    task.hasLoop = e.has('loop');

    const name = this.required(e, 'name', map, path);
    if (name) {
      const s = this.string(name.value, at('name'), 'a task name');
      if (s) {
        task.name = s.value;
        task.nameNode = s.node;
        if (!TASK_NAME.test(s.value)) {
          this.r.error(s.node, at('name'), `${at('name')}: "${s.value}" is not a valid task name (${TASK_NAME_RULE})`);
        }
      }
    }

    const exec = this.required(e, 'exec', map, path, ' (exec: { script: ... })');
    if (exec) this.exec(task, exec.value, at('exec'));

    const deps = e.get('depends_on');
    if (deps) {
      task.deps =
        this.names(deps.value, at('depends_on'), 'a task name or a list of task names', 'a task name', true) ?? [];
    }

    const when = e.get('when');
    if (when) task.when = this.condition(task, when.value, at('when'));

    const retry = e.get('retry');
    if (retry) task.retry = this.retry(retry.value, at('retry'));

    const timeout = e.get('timeout');
    if (timeout) task.timeoutMs = this.duration(timeout.value, at('timeout'), true);

    const loop = e.get('loop');
    if (loop) task.loop = this.loop(task, loop.value, at('loop'));

    const delegateTo = e.get('delegate_to');
    if (delegateTo) {
      const agents = this.names(
        delegateTo.value,
        at('delegate_to'),
        'an agent name or a list of agent names',
        'an agent name',
        true,
      );
      if (agents && agents.length === 0) {
        this.r.error(
          delegateTo.value,
          at('delegate_to'),
          `${at('delegate_to')}: the list is empty; name at least one agent`,
        );
      } else if (agents) {
        task.delegateTo = agents.map((a) => a.name);
        for (const a of agents) this.site(task, a.node as Scalar, a.path, a.name, true);
      }
    }

    const delegation = e.get('delegation');
    if (delegation) {
      task.delegation = this.delegation(task, delegation.value, at('delegation')) ?? task.delegation;
      if (!delegateTo) {
        this.r.warn(delegation.keyNode, at('delegation'), `${at('delegation')}: has no effect without delegate_to`);
      }
    }

    const dryRun = e.get('dry_run');
    if (dryRun) task.dryRun = this.choice(dryRun.value, at('dry_run'), DRY_RUN_MODES) ?? 'skip';

    const ignore = e.get('ignore_errors');
    if (ignore) task.ignoreErrors = this.boolean(ignore.value, at('ignore_errors')) ?? false;
    return task;
  }

  private site(task: TaskDraft, node: Scalar, path: string, value: string, inIteration: boolean): void {
    if (hasTemplateTag(value, this.template)) task.templates.push({ path, node, value, inIteration });
  }

  private exec(task: TaskDraft, node: MaybeNode, path: string): void {
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
  private condition(task: TaskDraft, node: MaybeNode, path: string): string | undefined {
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

  private retry(node: MaybeNode, path: string): RetryPolicy | undefined {
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

  private loop(task: TaskDraft, node: MaybeNode, path: string): LoopItem[] | string | undefined {
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
  private loopTemplates(task: TaskDraft, node: MaybeNode, path: string, depth: number): void {
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

  private delegation(task: TaskDraft, node: MaybeNode, path: string): Delegation | undefined {
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
