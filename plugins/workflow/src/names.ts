import { SCRIPT_GLOBALS } from '@runner/plugin-sdk';

/** Keys of a workflow file, in the order the reference documents them. */
export const WORKFLOW_KEYS = [
  'version',
  'description',
  'template',
  'parallel',
  'forks',
  'memory_limit',
  'stack',
  'vars',
  'groups',
  'tasks',
  'values',
];

export const TASK_KEYS = [
  'name',
  'exec',
  'depends_on',
  'when',
  'retry',
  'timeout',
  'loop',
  'delegate_to',
  'delegation',
  'dry_run',
  'ignore_errors',
];

export const EXEC_KEYS = ['script'];
export const RETRY_KEYS = ['attempts', 'delay', 'backoff', 'max_delay'];
export const DELEGATION_KEYS = ['strategy', 'when'];
export const DELEGATION_STRATEGIES = ['all', 'round_robin', 'failover', 'conditional'] as const;
export const TEMPLATE_ENGINES = ['jinja', 'go'] as const;
export const DRY_RUN_MODES = ['skip', 'run'] as const;

/** The names a template may start with; anything else is an unknown variable. */
export const TEMPLATE_ROOTS: readonly string[] = SCRIPT_GLOBALS;

/**
 * Task and group names: a letter or `_`, then letters, digits, `_` and `-`, at most 64 in all.
 * They appear in `tasks.<name>`, in `--group`, and in reports such as `per-host[web-1]`, so
 * dots, brackets and spaces are kept out.
 */
export const TASK_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
export const TASK_NAME_RULE = 'a letter or _, then letters, digits, _ or -, at most 64 characters';

/** Variable names are identifiers, so that `vars.<name>` works in Lua and in both template syntaxes. */
export const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const VAR_NAME_RULE = 'letters, digits and _, not starting with a digit';

/** `"a" or "b"`, `"a", "b" or "c"`. */
export function oneOf(choices: readonly string[]): string {
  const quoted = choices.map((c) => `"${c}"`);
  return quoted.length === 1 ? quoted[0] : `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`;
}
