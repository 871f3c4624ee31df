import type { Node, Scalar, YAMLMap } from 'yaml';
import type { Delegation, LoopItem, RetryPolicy, TemplateEngine, ValuesMap } from './types.js';

// What the schema reader produces: a draft of the workflow, checked further by checks.ts.

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
  forks?: number;
  memoryLimitBytes?: number;
  stack?: string;
  vars: Record<string, string>;
  groups: { name: string; members: NameRef[] }[];
  tasks: TaskDraft[];
  values: ValuesMap;
}

/** Values a task field falls back to; the reference documents each. */
export const DEFAULT_RETRY_DELAY_MS = 1000;
export const DEFAULT_RETRY_BACKOFF = 1;
