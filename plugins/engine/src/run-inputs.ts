import {
  didYouMean,
  InvalidInputError,
  type RunInputs,
  type RunInputsContributor,
  type RunRequest,
} from '@runner/plugin-sdk';

/** The run-input contributors (RunInputsContributor in the SDK), asked in the order registered. */
export class RunInputContributors {
  private contributors: RunInputsContributor[] = [];

  register(contributor: RunInputsContributor): () => void {
    this.contributors = [...this.contributors, contributor];
    return () => {
      this.contributors = this.contributors.filter((c) => c !== contributor);
    };
  }

  /** Every wanting contributor's inputs, merged in order; undefined (nothing awaited) when none wants the run. */
  async gather(request: RunRequest, workflowName: string): Promise<RunInputs | undefined> {
    let merged: RunInputs | undefined;
    for (const contributor of this.contributors) {
      if (!contributor.wants(request)) continue;
      const inputs = await contributor.contribute({ request, workflowName });
      merged = {
        vars: { ...merged?.vars, ...inputs.vars },
        globals: { ...merged?.globals, ...inputs.globals },
        strict: { ...merged?.strict, ...inputs.strict },
        secrets: [...(merged?.secrets ?? []), ...(inputs.secrets ?? [])],
      };
    }
    return merged;
  }
}

/**
 * The run's vars: the file's, then a contributor's for the names the file declares, then the
 * request's own (`--var`), which applyOverrides checks against the file's names.
 */
export function contributedVars(
  declared: Readonly<Record<string, string>>,
  contributed: Readonly<Record<string, string>> | undefined,
  requested: RunRequest['vars'],
): RunRequest['vars'] {
  if (!contributed) return requested;
  const vars: Record<string, string> = {};
  for (const [name, value] of Object.entries(contributed)) if (Object.hasOwn(declared, name)) vars[name] = value;
  return { ...vars, ...requested };
}

const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Refuses a workflow whose text reads a key a strict global does not hold (`secrets.db_pasword`,
 * `secrets["x"]`), naming each, before anything runs. The whole text is searched (scripts and
 * templates alike); a key computed at run time is not seen here and reads as nil.
 */
export function refuseUnknownKeys(text: string, strict: RunInputs['strict']): void {
  const problems: string[] = [];
  for (const [global, { keys, what }] of Object.entries(strict ?? {})) {
    if (!KEY.test(global) || !text.includes(global)) continue;
    const uses = new RegExp(
      `(?<![A-Za-z0-9_.])${global}\\s*(?:\\.\\s*([A-Za-z_][A-Za-z0-9_]*)|\\[\\s*["']([^"'\\]]*)["']\\s*\\])`,
      'g',
    );
    const unknown = new Set<string>();
    for (const match of text.matchAll(uses)) {
      const key = match[1] ?? match[2];
      if (!keys.includes(key)) unknown.add(key);
    }
    for (const key of unknown) {
      const known = keys.length === 0 ? `${what} holds none` : `${what} holds ${keys.join(', ')}`;
      problems.push(`${global}.${key}: no such name in ${what}${didYouMean(key, keys)} (${known})`);
    }
  }
  if (problems.length > 0) throw new InvalidInputError(problems.join('\n'), { field: 'stack' });
}
