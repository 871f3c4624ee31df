/** What `engine.script_env` and `agent.script_env` hold unless configured: what a shell needs, nothing secret. */
export const DEFAULT_SCRIPT_ENV: readonly string[] = Object.freeze(['PATH', 'HOME', 'LANG', 'TZ']);

/**
 * The environment workflow code sees (the `env` global of scripts and templates, `os.getenv`, the
 * commands of `os.execute` and `io.popen`): only the variables named in `allowList` that are set
 * in `from`. The process's own environment holds what a workflow must not read (credentials passed
 * as variables, `RUNNER_*` settings, cloud keys), so nothing passes unless named; names starting
 * with `RUNNER_` never pass, listed or not. The one place this rule lives: the engine, the agent
 * and whatever starts workflow code on their behalf call it.
 */
export function scriptEnvironment(
  allowList: readonly string[],
  from: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string> {
  const env: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const name of allowList) {
    const value = Object.prototype.hasOwnProperty.call(from, name) ? from[name] : undefined;
    if (value !== undefined && !name.startsWith('RUNNER_')) env[name] = value;
  }
  return env;
}
