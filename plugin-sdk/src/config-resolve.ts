import { createRequire } from 'node:module';
import type { ConfigDeclaration, ConfigKeySpec, ConfigSchema, RunnerConfig } from './config.js';
import { InvalidInputError, RunnerError } from './errors.js';
import { closest } from './suggest.js';

/** A value one source set for a dotted key, and which source that was. */
export interface ConfigEntry {
  value: unknown;
  /** The config file path, `env RUNNER_X`, `command-line flag (--x)`, ... */
  source: string;
}

/** The config keys one plugin declares (the kernel itself declares some, as plugin `kernel`). */
export interface ConfigDeclarer {
  pluginId: string;
  config?: ConfigDeclaration;
}

export interface ResolveConfigOptions {
  dataDir: string;
  /** Every set value by dotted key, later sources already applied over earlier ones. */
  entries: ReadonlyMap<string, ConfigEntry>;
  declarers: readonly ConfigDeclarer[];
}

/**
 * Checks every set value against the declarations and returns the config plugins read. The one
 * implementation of config checking: the kernel and the SDK's test kernel both call it.
 *
 * - A value of the wrong type or out of range: InvalidInputError naming key and source.
 * - A key no plugin declares, under a section (`http` of `http.port`) some plugin declares: an
 *   error with a did-you-mean, since a mistyped security setting silently ignored is dangerous.
 * - A key under a section no loaded plugin declares: a warning (in `warnings`), since the plugin
 *   reading it may be an external one that is absent here.
 */
export function resolveConfig(options: ResolveConfigOptions): RunnerConfig {
  const declared = mergeDeclarations(options.declarers);
  const sections = new Set([...declared.keys()].map(sectionOf));
  const values = new Map<string, ConfigEntry>();
  const warnings: string[] = [];
  const problems: Error[] = [];
  const needTypeBox: [string, ConfigKeySpec, ConfigEntry][] = [];

  for (const [key, entry] of options.entries) {
    const declaration = declared.get(key);
    if (!declaration) {
      // A section set as a whole (`agent.labels: {...}` read as a mapping) arrives flattened.
      const parent = [...declared].find(
        ([k, d]) => key.startsWith(`${k}.`) && (d.spec.schema as ConfigSchema).type === 'object',
      );
      if (parent) continue;
      const near = closest(key, declared.keys());
      const hint = near ? `; did you mean ${near}?` : '';
      const message = `unknown config key ${key} (from ${entry.source})${hint}`;
      if (sections.has(sectionOf(key))) problems.push(new InvalidInputError(message, { field: key }));
      else warnings.push(`${message} (no loaded plugin reads section ${sectionOf(key)}; ignored)`);
      continue;
    }
    try {
      const value = coerceToSchema(key, entry.value, declaration.spec.schema as ConfigSchema, entry.source);
      values.set(key, { value, source: entry.source });
      if (hasForeignKeywords(declaration.spec.schema)) needTypeBox.push([key, declaration.spec, { ...entry, value }]);
    } catch (error) {
      problems.push(error as Error);
    }
  }
  // Sections written as mappings (`agent.labels`) are rebuilt from their flattened leaves.
  for (const [key, { spec }] of declared) {
    if (values.has(key) || (spec.schema as ConfigSchema).type !== 'object') continue;
    const leaves = [...options.entries].filter(([k]) => k.startsWith(`${key}.`));
    if (leaves.length === 0) continue;
    const mapping = Object.fromEntries(leaves.map(([k, e]) => [k.slice(key.length + 1), e.value]));
    try {
      values.set(key, {
        value: coerceToSchema(key, mapping, spec.schema as ConfigSchema, leaves[0][1].source),
        source: leaves[0][1].source,
      });
    } catch (error) {
      problems.push(error as Error);
    }
  }
  if (needTypeBox.length > 0) problems.push(...checkWithTypeBox(needTypeBox));
  // One problem is thrown as it is (its `field` names the key); several, as one error listing all.
  if (problems.length === 1) throw problems[0];
  if (problems.length > 1) {
    throw new InvalidInputError(problems.map((p) => p.message).join('\n'), {
      details: { problems: problems.map((p) => p.message) },
    });
  }

  const tree: Record<string, unknown> = {};
  for (const [key, { value }] of options.entries) if (!declared.has(key)) assignPath(tree, key, value);
  for (const [key, { value }] of values) assignPath(tree, key, value);

  const effective = (key: string): unknown =>
    values.has(key) ? values.get(key)?.value : declared.get(key)?.spec.default;
  const config: RunnerConfig = {
    dataDir: options.dataDir,
    debug: effective('debug') === true,
    values: tree,
    warnings,
    find: (key) => values.get(key)?.value ?? (declared.has(key) ? undefined : options.entries.get(key)?.value),
    sourceOf: (key) => values.get(key)?.source ?? options.entries.get(key)?.source ?? 'default',
    get<T>(key: string, fallback?: T): T {
      if (declared.has(key)) return (effective(key) ?? fallback) as T;
      const entry = options.entries.get(key);
      if (entry === undefined) return fallback as T;
      if (fallback === undefined) return entry.value as T;
      return coerceToSchema(key, entry.value, schemaLike(fallback), entry.source) as T;
    },
    declared: () =>
      [...declared]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, { pluginId, spec }]) => ({
          key,
          pluginId,
          spec,
          value: effective(key),
          source: config.sourceOf(key),
        })),
  };
  return config;
}

function mergeDeclarations(
  declarers: readonly ConfigDeclarer[],
): Map<string, { pluginId: string; spec: ConfigKeySpec }> {
  const declared = new Map<string, { pluginId: string; spec: ConfigKeySpec }>();
  for (const { pluginId, config } of declarers) {
    for (const [key, spec] of Object.entries(config ?? {})) {
      const earlier = declared.get(key);
      if (earlier) {
        throw new RunnerError(
          'config_key_duplicate',
          `config key ${key} is declared by both plugin ${earlier.pluginId} and plugin ${pluginId}`,
          { details: { key, plugins: [earlier.pluginId, pluginId] } },
        );
      }
      declared.set(key, { pluginId, spec });
    }
  }
  return declared;
}

function sectionOf(key: string): string {
  const at = key.indexOf('.');
  return at < 0 ? key : key.slice(0, at);
}

/** The schema `get(key, fallback)` implies for a key nobody declares (external plugins' keys). */
function schemaLike(fallback: unknown): ConfigSchema {
  if (Array.isArray(fallback)) return { type: 'array' };
  if (typeof fallback === 'number') return { type: 'number' };
  if (typeof fallback === 'boolean') return { type: 'boolean' };
  if (typeof fallback === 'string') return { type: 'string' };
  return { type: 'object' };
}

const NATIVE_KEYWORDS = new Set([
  'type',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'enum',
  'items',
  'additionalProperties',
  // Annotations, no constraint.
  'description',
  'title',
  'default',
  '$id',
  'examples',
]);

/** True when the schema uses keywords only TypeBox checks (a plugin passed a richer TypeBox schema). */
function hasForeignKeywords(schema: object): boolean {
  for (const [keyword, value] of Object.entries(schema)) {
    if (!NATIVE_KEYWORDS.has(keyword)) return true;
    if ((keyword === 'items' || keyword === 'additionalProperties') && typeof value === 'object' && value !== null) {
      if (hasForeignKeywords(value as object)) return true;
    }
  }
  return false;
}

// Synchronous, so a config can be built in a plain function (tests, staticConfig); loaded only
// when a declaration needs it, which no built-in plugin's does.
const requireHere = createRequire(import.meta.url);

function checkWithTypeBox(items: [string, ConfigKeySpec, ConfigEntry][]): Error[] {
  const { Value } = requireHere('@sinclair/typebox/value') as typeof import('@sinclair/typebox/value');
  const problems: Error[] = [];
  for (const [key, spec, entry] of items) {
    const first = Value.Errors(spec.schema as never, entry.value).First();
    if (first) {
      problems.push(
        new InvalidInputError(
          `config ${key} (from ${entry.source}): ${first.message}${first.path ? ` at ${first.path}` : ''}, got ${JSON.stringify(entry.value)}`,
          { field: key },
        ),
      );
    }
  }
  return problems;
}

const TRUE = /^(true|1|yes|on)$/i;
const FALSE = /^(false|0|no|off)$/i;

/**
 * Converts a value to the schema's type (env and flag values are strings) and checks its
 * constraints. Throws an InvalidInputError naming the key and where the value came from.
 */
export function coerceToSchema(key: string, value: unknown, schema: ConfigSchema, source: string): unknown {
  const bad = (expected: string) =>
    new InvalidInputError(`config ${key} (from ${source}): expected ${expected}, got ${JSON.stringify(value)}`, {
      field: key,
    });
  const text = typeof value === 'string' ? value.trim() : undefined;
  let result: unknown;
  switch (schema.type) {
    case 'integer':
    case 'number': {
      const n = text !== undefined && text !== '' ? Number(text) : value;
      if (typeof n !== 'number' || !Number.isFinite(n) || (schema.type === 'integer' && !Number.isInteger(n))) {
        throw bad(describe(schema));
      }
      result = n;
      break;
    }
    case 'boolean':
      if (typeof value === 'boolean') result = value;
      else if (text !== undefined && TRUE.test(text)) result = true;
      else if (text !== undefined && FALSE.test(text)) result = false;
      else throw bad(describe(schema));
      break;
    case 'string':
      if (typeof value !== 'string' && typeof value !== 'number') throw bad(describe(schema));
      result = String(value);
      break;
    case 'array': {
      const list = Array.isArray(value)
        ? value
        : text !== undefined
          ? text
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean)
          : undefined;
      if (!list) throw bad(describe(schema));
      result = schema.items ? list.map((item, i) => coerceToSchema(`${key}[${i}]`, item, schema.items!, source)) : list;
      break;
    }
    case 'object': {
      const mapping = text !== undefined ? parsePairs(key, text, source) : value;
      if (mapping === null || typeof mapping !== 'object' || Array.isArray(mapping)) throw bad(describe(schema));
      const itemSchema = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
      result = itemSchema
        ? Object.fromEntries(
            Object.entries(mapping).map(([k, v]) => [k, coerceToSchema(`${key}.${k}`, v, itemSchema, source)]),
          )
        : mapping;
      break;
    }
    default:
      throw new RunnerError('config_schema_invalid', `config ${key}: its declaration has no supported type`);
  }
  if (!withinConstraints(result, schema)) throw bad(describe(schema));
  return result;
}

function parsePairs(key: string, text: string, source: string): Record<string, string> {
  return parseKeyValuePairs(
    text,
    (pair) => new InvalidInputError(`config ${key} (from ${source}): "${pair}" is not key=value`, { field: key }),
  );
}

/**
 * `k=v, k2=v2` as a mapping: the one way to write one in an environment variable or a flag
 * (config values, `--labels`). Blank items are skipped; `refuse` makes the error for an item
 * without a key.
 */
export function parseKeyValuePairs(text: string, refuse: (pair: string) => Error): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const at = pair.indexOf('=');
    if (at <= 0) throw refuse(pair);
    out[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  return out;
}

function withinConstraints(value: unknown, schema: ConfigSchema): boolean {
  if (schema.enum && !schema.enum.includes(value as never)) return false;
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) return false;
    if (schema.maximum !== undefined && value > schema.maximum) return false;
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) return false;
    if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) return false;
  }
  if (typeof value === 'string' && schema.minLength !== undefined && value.trim().length < schema.minLength)
    return false;
  return true;
}

/** "an integer from 0 to 65535", "a number above 0", "one of auto, never". */
export function describe(schema: ConfigSchema): string {
  if (schema.enum) return `one of ${schema.enum.join(', ')}`;
  const noun = {
    integer: 'an integer',
    number: 'a number',
    string: 'a string',
    boolean: 'true or false',
    array: 'a list (a,b,c in env and flags)',
    object: 'a mapping (k=v,k2=v2 in env and flags)',
  }[schema.type];
  const bounds: string[] = [];
  if (schema.minimum !== undefined && schema.maximum !== undefined)
    bounds.push(`from ${schema.minimum} to ${schema.maximum}`);
  else if (schema.minimum !== undefined) bounds.push(`of at least ${schema.minimum}`);
  else if (schema.maximum !== undefined) bounds.push(`of at most ${schema.maximum}`);
  if (schema.exclusiveMinimum !== undefined) bounds.push(`above ${schema.exclusiveMinimum}`);
  if (schema.exclusiveMaximum !== undefined) bounds.push(`below ${schema.exclusiveMaximum}`);
  if (schema.minLength !== undefined && schema.minLength > 0) bounds.push('not empty');
  return [noun, ...bounds].join(' ');
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
