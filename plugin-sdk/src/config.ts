import type { TSchema } from '@sinclair/typebox';

/**
 * One config key a plugin reads, declared in `definePlugin({ config })`. The kernel validates every
 * source (file, env, flags) against the schema before any setup runs: a wrong type names key and
 * source, an unknown key gets a did-you-mean. `runner config show` lists each key with its value,
 * source and help; `secret` keys are shown redacted.
 */
export interface ConfigKeySpec {
  /** TypeBox schema of the value (after env/flag strings are coerced to it). */
  schema: TSchema;
  default?: unknown;
  /** One line for `runner config show` and `runner doctor`. */
  help: string;
  secret?: boolean;
}

/** Dotted key (`http.port`) to its declaration. */
export type ConfigDeclaration = Readonly<Record<string, ConfigKeySpec>>;

/**
 * The merged configuration: built-in defaults, then `config.yaml` in the data directory, then
 * `RUNNER_*` environment variables, then command-line flags; later sources win.
 */
export interface RunnerConfig {
  /** Absolute path of the data directory (default `~/.runner`). */
  dataDir: string;
  debug: boolean;
  /** The whole merged tree, keyed as in `config.yaml` (e.g. `http.port`). */
  values: Readonly<Record<string, unknown>>;
  /**
   * Reads a dotted key such as `http.port`. Returns `fallback` when absent; throws an
   * InvalidInputError naming the key and the source when the value has the wrong type.
   */
  get<T extends string | number | boolean | string[] | Record<string, unknown>>(key: string, fallback: T): T;
  /** Like `get`, undefined when absent. */
  find(key: string): unknown;
  /** Where a key's value came from (`default`, the config file path, `env RUNNER_X`, `flag --x`). */
  sourceOf(key: string): string;
}
