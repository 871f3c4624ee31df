import { didYouMean, InvalidInputError, userKeyed } from '@runner/plugin-sdk';
import { VAR_NAME, VAR_NAME_RULE } from './names.js';
import { isPlainObject, setOwn } from './objects.js';
import type { ValuesMap, VarsFrom, WorkflowDefinition, WorkflowOverrides } from './types.js';

/** A var as the caller gave it: a CLI argument, or a field of `vars` (a hook's, a schedule's). */
function varLabel(name: string, value: string, from: VarsFrom = 'arguments'): string {
  return from === 'fields' ? `vars.${name}` : `--var ${JSON.stringify(`${name}=${value}`)}`;
}

function checkVarName(label: string, name: string): string | undefined {
  if (VAR_NAME.test(name)) return undefined;
  return `${label}: "${name}" is not a valid variable name (${VAR_NAME_RULE})`;
}

/**
 * Reads `--var key=value` arguments: the value is everything after the first `=` and may be
 * empty; a later argument for the same key wins. Throws one InvalidInputError naming every bad
 * argument.
 */
export function parseVarArguments(args: readonly string[]): Record<string, string> {
  const vars = userKeyed<string>();
  const problems: string[] = [];
  for (const arg of args) {
    const eq = arg.indexOf('=');
    if (eq < 0) {
      problems.push(`--var ${JSON.stringify(arg)}: expected key=value`);
      continue;
    }
    const name = arg.slice(0, eq).trim();
    const problem =
      name === ''
        ? `--var ${JSON.stringify(arg)}: expected key=value`
        : checkVarName(`--var ${JSON.stringify(arg)}`, name);
    if (problem) problems.push(problem);
    else setOwn(vars, name, arg.slice(eq + 1));
  }
  if (problems.length > 0) throw new InvalidInputError(problems.join('\n'), { field: 'vars' });
  return vars;
}

/** Mappings merge key by key, recursively; anything else (lists included) is replaced. */
function deepMerge(base: Record<string, unknown>, over: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = Object.hasOwn(out, key) ? out[key] : undefined;
    setOwn(out, key, isPlainObject(current) && isPlainObject(value) ? deepMerge(current, value) : value);
  }
  return out;
}

/** `over`'s entry for each agent deep-merged over `base`'s; agents only in `over` are added. */
export function mergeValues(
  base: ValuesMap,
  over: Readonly<Record<string, Readonly<Record<string, unknown>>>>,
): ValuesMap {
  const out = Object.assign(userKeyed<Record<string, unknown>>(), base) as ValuesMap;
  for (const [agent, entry] of Object.entries(over)) {
    if (!isPlainObject(entry)) {
      throw new InvalidInputError(`--values: agent "${agent}": expected a mapping of values`, { field: 'values' });
    }
    setOwn(out, agent, deepMerge(Object.hasOwn(out, agent) ? out[agent] : {}, entry));
  }
  return out;
}

/**
 * A copy of the workflow with `--var` and `--values` applied. A `--var` may only set a variable
 * the workflow declares in `vars` (the file is the list of a workflow's parameters, and a typo on
 * the command line should not pass silently). Throws an InvalidInputError naming every bad
 * var as it was given (`overrides.varsFrom`); the workflow given is never changed.
 */
export function applyOverrides(workflow: WorkflowDefinition, overrides: WorkflowOverrides): WorkflowDefinition {
  const declared = Object.keys(workflow.vars);
  const problems: string[] = [];
  let given = userKeyed<string>();
  const args = overrides.vars;
  if (Array.isArray(args)) {
    try {
      given = parseVarArguments(args);
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      problems.push(error.message);
    }
  } else if (args !== undefined) {
    for (const [name, value] of Object.entries(args as Readonly<Record<string, string>>)) {
      const problem = checkVarName(varLabel(name, value, overrides.varsFrom), name);
      if (problem) problems.push(problem);
      else setOwn(given, name, value);
    }
  }
  for (const [name, value] of Object.entries(given)) {
    if (Object.hasOwn(workflow.vars, name)) continue;
    const known = declared.length > 0 ? `; declared: ${declared.join(', ')}` : '; it declares no vars';
    const label = varLabel(name, value, Array.isArray(args) ? 'arguments' : overrides.varsFrom);
    problems.push(`${label}: the workflow has no variable "${name}"${didYouMean(name, declared)}${known}`);
  }
  if (problems.length > 0) throw new InvalidInputError(problems.join('\n'), { field: 'vars' });

  return {
    ...workflow,
    vars: { ...workflow.vars, ...given },
    values: overrides.values === undefined ? workflow.values : mergeValues(workflow.values, overrides.values),
  };
}
