import { isMap, isScalar, isSeq, type Scalar, type YAMLMap } from 'yaml';
import {
  DRY_RUN_MODES,
  TASK_KEYS,
  TASK_NAME,
  TASK_NAME_RULE,
  TEMPLATE_ENGINES,
  VAR_NAME,
  VAR_NAME_RULE,
  WORKFLOW_KEYS,
} from './names.js';
import { userKeyed } from '@runner/plugin-sdk';
import { setOwn } from './objects.js';
import { indexPath, keyPath, type MaybeNode } from './reader.js';
import type { ValuesMap } from './types.js';
import { TaskPartsReader } from './task-parts.js';
import type { TaskDraft, WorkflowDraft } from './schema-types.js';

export type { NameRef, TaskDraft, TemplateSite, WorkflowDraft } from './schema-types.js';

const KEY_HINTS: Record<string, Record<string, string>> = {
  task: { script: ' (a script goes under exec: write exec: { script: ... })' },
  workflow: { name: ' (a workflow is named by the command line or the saved flow, not in the file)' },
};

/** Reads a workflow document's keys and types; the graph and template checks come after. */
export class WorkflowSchema extends TaskPartsReader {
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
    const forks = e.get('forks');
    if (forks) draft.forks = this.number(forks.value, 'forks', 1, true);
    const memoryLimit = e.get('memory_limit');
    // 32 MiB: below that a Lua worker cannot hold fengari and a state.
    if (memoryLimit) draft.memoryLimitBytes = this.byteSize(memoryLimit.value, 'memory_limit', 32);
    const stack = e.get('stack');
    if (stack) draft.stack = this.string(stack.value, 'stack')?.value;
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
    const out = userKeyed<string>();
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
    // Keyed by agent names: no prototype, so `values[agent]` never finds Object's own members.
    const out = userKeyed<Record<string, unknown>>() as ValuesMap;
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
}
