import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { InvalidInputError, type RunnerConfig } from '@runner/plugin-sdk';

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

type Source = string;

/**
 * Environment variables that do not follow the RUNNER_<SECTION>_<KEY> rule, because their names
 * are documented (service.md names RUNNER_MASTER_ADDR).
 */
const ENV_ALIASES: Record<string, string> = {
  RUNNER_MASTER_ADDR: 'master.address',
  RUNNER_DEBUG: 'debug',
  RUNNER_PLUGINS_DIR: 'plugins.dirs',
  RUNNER_JOIN_TOKEN: 'agent.join_token',
};
const ENV_IGNORED = new Set(['RUNNER_DATA_DIR', 'RUNNER_CONFIG']);

/** Where the data directory is, before any config is read (the config file lives inside it). */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(flag ?? env.RUNNER_DATA_DIR ?? join(homedir(), '.runner'));
}

/**
 * Merges defaults, the YAML config file, RUNNER_* variables and flags; later sources win. Every
 * value remembers its source so a type error can say where the bad value came from.
 */
export async function loadConfig(sources: ConfigSources = {}): Promise<RunnerConfig> {
  const env = sources.env ?? process.env;
  const dataDir = resolveDataDir(sources.dataDir, env);
  const flat = new Map<string, { value: unknown; source: Source }>();
  const set = (key: string, value: unknown, source: Source) => flat.set(key, { value, source });

  const explicitFile = sources.configFile ?? env.RUNNER_CONFIG;
  const configFile = explicitFile ? resolve(explicitFile) : join(dataDir, 'config.yaml');
  if (!sources.ignoreFile && explicitFile && !existsSync(configFile)) {
    throw new InvalidInputError(`config file ${configFile} does not exist`, { field: 'config' });
  }
  if (!sources.ignoreFile && existsSync(configFile)) {
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

  const tree: Record<string, unknown> = {};
  for (const [key, { value }] of flat) assignPath(tree, key, value);

  const config: RunnerConfig = {
    dataDir,
    debug: false,
    values: tree,
    find: (key) => flat.get(key)?.value,
    sourceOf: (key) => flat.get(key)?.source ?? 'default',
    get(key, fallback) {
      const entry = flat.get(key);
      if (entry === undefined) return fallback;
      return coerce(key, entry.value, fallback, entry.source) as typeof fallback;
    },
  };
  return { ...config, debug: config.get('debug', false) };
}

/** RUNNER_HTTP_BIND_ADDRESS -> http.bind_address: the first word is the section. */
function envKey(name: string): string | undefined {
  const rest = name.slice('RUNNER_'.length).toLowerCase();
  const at = rest.indexOf('_');
  return at > 0 ? `${rest.slice(0, at)}.${rest.slice(at + 1)}` : undefined;
}

async function readYamlConfig(file: string): Promise<Record<string, unknown>> {
  const { parseDocument, LineCounter } = await import('yaml');
  const lineCounter = new LineCounter();
  const doc = parseDocument(readFileSync(file, 'utf8'), { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    const first = doc.errors[0];
    const pos = lineCounter.linePos(first.pos[0]);
    throw new InvalidInputError(`${file}:${pos.line}:${pos.col}: ${first.message.split('\n')[0]}`, { field: 'config' });
  }
  const value = doc.toJS() as unknown;
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidInputError(
      `${file}: the config file must be a mapping of keys, not ${Array.isArray(value) ? 'a list' : typeof value}`,
      {
        field: 'config',
      },
    );
  }
  return value as Record<string, unknown>;
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

function assignPath(tree: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split('.');
  let node = tree;
  for (const part of parts.slice(0, -1)) {
    if (typeof node[part] !== 'object' || node[part] === null || Array.isArray(node[part])) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1]] = value;
}

/** Environment variables and flags arrive as strings; convert them to the type the reader wants. */
function coerce(key: string, value: unknown, fallback: unknown, source: Source): unknown {
  const want = Array.isArray(fallback) ? 'list' : typeof fallback;
  const bad = () =>
    new InvalidInputError(
      `config ${key} (from ${source}): expected ${want === 'object' ? 'a mapping' : `a ${want}`}, got ${JSON.stringify(value)}`,
      {
        field: key,
      },
    );
  switch (want) {
    case 'number': {
      const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isFinite(n)) throw bad();
      return n;
    }
    case 'boolean': {
      if (typeof value === 'boolean') return value;
      if (typeof value === 'string' && /^(true|1|yes|on)$/i.test(value)) return true;
      if (typeof value === 'string' && /^(false|0|no|off)$/i.test(value)) return false;
      throw bad();
    }
    case 'string':
      if (typeof value === 'string' || typeof value === 'number') return String(value);
      throw bad();
    case 'list':
      if (Array.isArray(value)) return value;
      if (typeof value === 'string')
        return value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
      throw bad();
    default:
      if (value !== null && typeof value === 'object') return value;
      throw bad();
  }
}
