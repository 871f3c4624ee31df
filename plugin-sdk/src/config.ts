import type { TSchema } from '@sinclair/typebox';

/**
 * The schema of one config value: the JSON Schema keywords config needs, as a plain object, so a
 * plugin declares its keys without loading a schema library when its entry is imported (the CLI
 * imports every plugin entry on each start). A TypeBox schema (`Type.Integer({ minimum: 0 })`,
 * from `@runner/plugin-sdk/schema`) is the same JSON object and is accepted too; keywords beyond
 * these (`pattern`, `anyOf`, ...) are checked with TypeBox, which is then loaded only for them.
 */
export interface ConfigSchema {
  type: 'integer' | 'number' | 'string' | 'boolean' | 'array' | 'object';
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  enum?: readonly (string | number | boolean)[];
  /** For `array`: the schema of every item. */
  items?: ConfigSchema;
  /** For `object`: the schema of every value (string keys). */
  additionalProperties?: ConfigSchema | boolean;
}

/**
 * One config key a plugin reads, declared in `definePlugin({ config })`. The kernel validates every
 * source (file, env, flags) against the schema before any setup runs: a wrong type names key and
 * source, an unknown key gets a did-you-mean. `runner config show` lists each key with its value,
 * source and help; `secret` keys are shown redacted.
 *
 * Values from `RUNNER_*` variables and flags are strings and are coerced to the schema's type:
 * numbers, booleans (`true/false/1/0/yes/no/on/off`), arrays (`a,b,c`), objects (`k=v,k2=v2`).
 */
export interface ConfigKeySpec {
  schema: ConfigSchema | TSchema;
  default?: unknown;
  /** One line for `runner config show` and `runner doctor`. */
  help: string;
  secret?: boolean;
}

/** Dotted key (`http.port`) to its declaration. */
export type ConfigDeclaration = Readonly<Record<string, ConfigKeySpec>>;

/**
 * The merged configuration: declared defaults, then `config.yaml` in the data directory, then
 * `RUNNER_*` environment variables, then command-line flags; later sources win. Every value has
 * been checked against its key's declaration before any plugin is set up.
 */
export interface RunnerConfig {
  /** Absolute path of the data directory (default `~/.runner`). */
  dataDir: string;
  debug: boolean;
  /** The whole merged tree of set values, keyed as in `config.yaml` (e.g. `http.port`). */
  values: Readonly<Record<string, unknown>>;
  /**
   * A declared key's validated value, or its declared default. For a key no plugin declares (an
   * external plugin's, read by another), `fallback` when absent; throws an InvalidInputError naming
   * key and source when the value does not match `fallback`'s type.
   */
  get<T = unknown>(key: string, fallback?: T): T;
  /** The value set by some source (file, env, flag), undefined when only a default applies. */
  find(key: string): unknown;
  /** Where a key's value came from (`default`, the config file path, `env RUNNER_X`, `flag --x`). */
  sourceOf(key: string): string;
  /** Every declared key with its plugin, in key order (for `runner config show` and doctor). */
  declared(): readonly DeclaredConfigKey[];
  /** Problems that did not stop the load: keys under sections no loaded plugin declares. */
  readonly warnings: readonly string[];
}

/** A declared key as the kernel merged it: who declared it and its effective value. */
export interface DeclaredConfigKey {
  key: string;
  pluginId: string;
  spec: ConfigKeySpec;
  /** The validated value, or the default; undefined when neither exists. */
  value: unknown;
  source: string;
}

/**
 * The most common declaration: a number above 0 (seconds, bytes, a rate), with its default.
 * `definePlugin({ config: { 'x.timeout': positiveNumber(30, 'seconds a call may take') } })`.
 */
export function positiveNumber(fallback: number, help: string): ConfigKeySpec {
  return { schema: { type: 'number', exclusiveMinimum: 0 }, default: fallback, help };
}
