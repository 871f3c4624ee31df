import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  InvalidInputError,
  CORE_CONFIG,
  coerceToSchema,
  resolveConfig,
  type ConfigDeclarer,
  type ConfigEntry,
  type ConfigSchema,
  type Plugin,
  type RunnerConfig,
} from '@runner/plugin-sdk';

export interface ConfigSources {
  /** `--data-dir`; otherwise `RUNNER_DATA_DIR`; otherwise `~/.runner`. */
  dataDir?: string;
  /** `--config`; otherwise `<dataDir>/config.yaml` when it exists. */
  configFile?: string;
  /** Dotted keys from command-line flags; they win over everything. */
  flags?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  debug?: boolean;
  /** Defaults only from files: used when the config file is broken and a command must still run. */
  ignoreFile?: boolean;
}

/**
 * Environment variables that do not follow the RUNNER_<SECTION>_<KEY> rule, because their names
 * are documented (service.md names RUNNER_MASTER_ADDR).
 */
const ENV_ALIASES: Record<string, string> = {
  RUNNER_MASTER_ADDR: 'master.address',
  RUNNER_DEBUG: 'debug',
  RUNNER_PLUGINS_DIR: 'plugins.dirs',
  RUNNER_JOIN_TOKEN: 'agent.join_token',
  // The certificate (or CA) the CLI trusts for an https:// master, as the global --ca sets it.
  RUNNER_CA: 'master.tls_cert',
};
// Not config: where the config is, the CLI's credentials, test and install-time inputs.
const ENV_IGNORED = new Set([
  'RUNNER_DATA_DIR',
  'RUNNER_CONFIG',
  'RUNNER_BUILTIN_PLUGINS_DIR',
  'RUNNER_SSH_KEY_PASSPHRASE',
  // What the commands of a master's executor or an agent's tasks start under (resource-limits.ts).
  'RUNNER_COMMAND_CONFINEMENT',
]);

/** Where the data directory is, before any config is read (the config file lives inside it). */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(flag ?? env.RUNNER_DATA_DIR ?? join(homedir(), '.runner'));
}

/**
 * Reads the YAML config file, RUNNER_* variables and flags into one map of dotted keys; later
 * sources win. Every value remembers its source so a type error can say where it came from.
 */
export async function readConfigSources(sources: ConfigSources = {}): Promise<RawConfig> {
  const env = sources.env ?? process.env;
  const dataDir = resolveDataDir(sources.dataDir, env);
  const entries = new Map<string, ConfigEntry>();
  const set = (key: string, value: unknown, source: string) => entries.set(key, { value, source });

  const explicitFile = sources.configFile ?? env.RUNNER_CONFIG;
  const configFile = explicitFile ? resolve(explicitFile) : join(dataDir, 'config.yaml');
  if (!sources.ignoreFile && explicitFile && !existsSync(configFile)) {
    throw new InvalidInputError(`config file ${configFile} does not exist`, { field: 'config' });
  }
  if (!sources.ignoreFile && existsSync(configFile)) {
    // Loaded only when there is a file: most commands of a fresh install have none.
    const { readYamlConfig } = await import('./config-file.js');
    for (const [key, value] of flatten(await readYamlConfig(configFile))) set(key, value, configFile);
  }

  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith('RUNNER_') || ENV_IGNORED.has(name) || raw === undefined) continue;
    const key = ENV_ALIASES[name] ?? envKey(name);
    if (key) set(key, key === 'plugins.dirs' ? raw.split(':').filter(Boolean) : raw, `env ${name}`);
  }

  for (const [key, value] of Object.entries(sources.flags ?? {})) {
    if (value !== undefined) set(key, value, `command-line flag (${key})`);
  }
  if (sources.debug) set('debug', true, 'flag --debug');
  return { dataDir, entries };
}

/** What the sources set, before it is checked against the plugins' declarations. */
export interface RawConfig {
  dataDir: string;
  entries: Map<string, ConfigEntry>;
}

/** Who declares config keys: the kernel (core keys) and every discovered plugin, whatever the profile. */
export function configDeclarers(plugins: readonly { plugin: Pick<Plugin, 'id' | 'config'> }[]): ConfigDeclarer[] {
  return [
    { pluginId: 'kernel', config: CORE_CONFIG },
    ...plugins.map(({ plugin }) => ({ pluginId: plugin.id, config: plugin.config })),
  ];
}

/** `plugins.dirs` as the sources set it, read before discovery (the other keys need the plugins). */
export function pluginsDirsOf(entries: ReadonlyMap<string, ConfigEntry>): string[] {
  const entry = entries.get('plugins.dirs');
  if (!entry) return [];
  return coerceToSchema(
    'plugins.dirs',
    entry.value,
    CORE_CONFIG['plugins.dirs'].schema as ConfigSchema,
    entry.source,
  ) as string[];
}

/**
 * Reads every source and checks it against the declarations of the kernel and of `plugins` (all
 * discovered plugins, whatever the profile): see resolveConfig in the SDK.
 */
export async function loadConfig(
  sources: ConfigSources = {},
  plugins: readonly { plugin: Pick<Plugin, 'id' | 'config'> }[] = [],
): Promise<RunnerConfig> {
  const raw = await readConfigSources(sources);
  return resolveConfig({
    dataDir: raw.dataDir,
    entries: raw.entries,
    declarers: configDeclarers(plugins),
  });
}

/** RUNNER_HTTP_BIND_ADDRESS -> http.bind_address: the first word is the section. */
function envKey(name: string): string | undefined {
  const rest = name.slice('RUNNER_'.length).toLowerCase();
  const at = rest.indexOf('_');
  return at > 0 ? `${rest.slice(0, at)}.${rest.slice(at + 1)}` : undefined;
}

/** Only leaves are keys (`http.port`); whole sections are read from `values`. */
function flatten(tree: Record<string, unknown>, prefix = '', out = new Map<string, unknown>()): Map<string, unknown> {
  for (const [key, value] of Object.entries(tree)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (value !== null && typeof value === 'object' && !Array.isArray(value))
      flatten(value as Record<string, unknown>, path, out);
    else out.set(path, value);
  }
  return out;
}
