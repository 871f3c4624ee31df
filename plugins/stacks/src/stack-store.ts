import {
  AGENT_NAME_PATTERN,
  AGENT_NAME_RULE,
  ConflictError,
  didYouMean,
  InvalidInputError,
  NotFoundError,
  STACK_ENVIRONMENTS,
  type Migration,
  type Stack,
  type StackEnvironment,
  type Stacks,
  type Store,
} from '@runner/plugin-sdk';

export const STACK_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'stacks (environments) and their variables',
    sql: `CREATE TABLE stacks (
      name TEXT PRIMARY KEY,
      description TEXT NOT NULL DEFAULT '',
      environment TEXT NOT NULL,
      active INTEGER NOT NULL DEFAULT 1,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );
    CREATE TABLE stack_variables (
      stack TEXT NOT NULL REFERENCES stacks(name) ON DELETE CASCADE,
      key TEXT NOT NULL,
      value TEXT NOT NULL,
      PRIMARY KEY (stack, key)
    );`,
  },
];

export const MAX_DESCRIPTION = 500;
export const MAX_VARIABLE_BYTES = 4096;
export const MAX_VARIABLES = 1000;
/** Keys are identifiers, so `stack.vars.<key>` works in Lua and both template syntaxes. */
export const VARIABLE_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
export const VARIABLE_KEY_RULE = 'a letter or _, then letters, digits or _ (at most 64)';

export type StackChange = 'created' | 'updated' | 'deleted';

interface StackRow {
  name: string;
  description: string;
  environment: StackEnvironment;
  active: number;
  created_at: string;
  updated_at: string;
}

export interface StackFields {
  description?: string;
  environment?: string;
  active?: boolean;
}

function checkName(name: unknown): string {
  if (typeof name !== 'string' || !AGENT_NAME_PATTERN.test(name))
    throw new InvalidInputError(`name: stack name ${JSON.stringify(name)} is not valid: use ${AGENT_NAME_RULE}`, {
      field: 'name',
    });
  return name;
}

function checkEnvironment(environment: unknown): StackEnvironment {
  if (!STACK_ENVIRONMENTS.includes(environment as StackEnvironment))
    throw new InvalidInputError(
      `environment: ${JSON.stringify(environment)} is not one of ${STACK_ENVIRONMENTS.join(', ')}`,
      { field: 'environment' },
    );
  return environment as StackEnvironment;
}

function checkDescription(description: unknown): string {
  if (typeof description !== 'string' || description.length > MAX_DESCRIPTION)
    throw new InvalidInputError(`description: text of at most ${MAX_DESCRIPTION} characters`, { field: 'description' });
  return description.trim();
}

export function checkVariable(key: unknown, value: unknown): [string, string] {
  if (typeof key !== 'string' || !VARIABLE_KEY.test(key))
    throw new InvalidInputError(`key: ${JSON.stringify(key)} is not a variable name: use ${VARIABLE_KEY_RULE}`, {
      field: 'key',
    });
  if (typeof value !== 'string' || Buffer.byteLength(value) > MAX_VARIABLE_BYTES)
    throw new InvalidInputError(`value: text of at most ${MAX_VARIABLE_BYTES} bytes`, { field: 'value' });
  return [key, value];
}

/**
 * Stacks in the master's store, answered from a copy in memory (loaded at open, read again after
 * each write and when another master says it changed one): a run naming a stack looks it up with
 * no store read. Each write is one transaction.
 */
export class StackStore implements Stacks {
  private readonly stacks = new Map<string, Stack>();

  constructor(
    private readonly store: Store,
    /** Told after each change is durable (broadcast and the cluster). */
    private readonly onChange: (name: string, change: StackChange) => void = () => {},
    private readonly now: () => Date = () => new Date(),
  ) {}

  async open(): Promise<void> {
    await this.store.migrate('stacks', STACK_MIGRATIONS);
    const variables = new Map<string, Record<string, string>>();
    for (const row of await this.store.all<{ stack: string; key: string; value: string }>(
      'SELECT stack, key, value FROM stack_variables ORDER BY stack, key',
    ))
      (variables.get(row.stack) ?? variables.set(row.stack, {}).get(row.stack)!)[row.key] = row.value;
    for (const row of await this.store.all<StackRow>('SELECT * FROM stacks ORDER BY name'))
      this.stacks.set(row.name, toStack(row, variables.get(row.name) ?? {}));
  }

  /** Reads one stack back from the store (gone when deleted). */
  async refresh(name: string): Promise<Stack | undefined> {
    const row = await this.store.get<StackRow>('SELECT * FROM stacks WHERE name = ?', [name]);
    if (!row) {
      this.stacks.delete(name);
      return undefined;
    }
    const variables: Record<string, string> = {};
    for (const v of await this.store.all<{ key: string; value: string }>(
      'SELECT key, value FROM stack_variables WHERE stack = ? ORDER BY key',
      [name],
    ))
      variables[v.key] = v.value;
    const stack = toStack(row, variables);
    this.stacks.set(name, stack);
    return stack;
  }

  get(name: string): Stack | undefined {
    return this.stacks.get(name);
  }

  names(): string[] {
    return [...this.stacks.keys()].sort();
  }

  list(): Stack[] {
    return this.names().map((name) => this.stacks.get(name)!);
  }

  async check(name: string): Promise<void> {
    if (!this.get(name)) await this.refresh(name);
    this.require(name);
  }

  /** The stack, or a NotFoundError naming it and the nearest existing one. */
  require(name: string): Stack {
    const stack = this.get(name);
    if (stack) return stack;
    const names = this.names();
    const hint = names.length === 0 ? 'no stack exists yet (runner stack add <name>)' : `stacks: ${names.join(', ')}`;
    throw new NotFoundError(`stack "${name}" does not exist${didYouMean(name, names)} (${hint})`, {
      details: { stack: name },
    });
  }

  async create(fields: StackFields & { name: string; variables?: Record<string, string> }): Promise<Stack> {
    const name = checkName(fields.name);
    const environment = checkEnvironment(fields.environment ?? 'development');
    const description = checkDescription(fields.description ?? '');
    const variables = Object.entries(fields.variables ?? {}).map(([k, v]) => checkVariable(k, v));
    if (variables.length > MAX_VARIABLES)
      throw new InvalidInputError(`variables: a stack holds at most ${MAX_VARIABLES}`, { field: 'variables' });
    if (this.get(name)) throw new ConflictError(`stack "${name}" already exists`, { details: { stack: name } });
    const at = this.now().toISOString();
    await this.store.transaction([
      {
        sql: 'INSERT INTO stacks (name, description, environment, active, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
        params: [name, description, environment, fields.active === false ? 0 : 1, at, at],
      },
      ...variables.map(([key, value]) => ({
        sql: 'INSERT INTO stack_variables (stack, key, value) VALUES (?, ?, ?)',
        params: [name, key, value],
      })),
    ]);
    return this.changed(name, 'created');
  }

  async update(name: string, fields: StackFields): Promise<Stack> {
    this.require(name);
    const changes: [string, string | number][] = [];
    if (fields.description !== undefined) changes.push(['description', checkDescription(fields.description)]);
    if (fields.environment !== undefined) changes.push(['environment', checkEnvironment(fields.environment)]);
    if (fields.active !== undefined) changes.push(['active', fields.active ? 1 : 0]);
    changes.push(['updated_at', this.now().toISOString()]);
    await this.store.run(`UPDATE stacks SET ${changes.map(([column]) => `${column} = ?`).join(', ')} WHERE name = ?`, [
      ...changes.map(([, value]) => value),
      name,
    ]);
    return this.changed(name, 'updated');
  }

  async setVariable(name: string, key: string, value: string): Promise<Stack> {
    const stack = this.require(name);
    checkVariable(key, value);
    if (!(key in stack.variables) && Object.keys(stack.variables).length >= MAX_VARIABLES)
      throw new InvalidInputError(`a stack holds at most ${MAX_VARIABLES} variables`, { field: 'key' });
    await this.store.transaction([
      {
        sql: 'INSERT INTO stack_variables (stack, key, value) VALUES (?, ?, ?) ON CONFLICT (stack, key) DO UPDATE SET value = excluded.value',
        params: [name, key, value],
      },
      this.touch(name),
    ]);
    return this.changed(name, 'updated');
  }

  async unsetVariable(name: string, key: string): Promise<Stack> {
    const stack = this.require(name);
    if (!(key in stack.variables)) {
      const keys = Object.keys(stack.variables);
      throw new NotFoundError(`stack "${name}" has no variable "${key}"${didYouMean(key, keys)}`, {
        details: { stack: name, key },
      });
    }
    await this.store.transaction([
      { sql: 'DELETE FROM stack_variables WHERE stack = ? AND key = ?', params: [name, key] },
      this.touch(name),
    ]);
    return this.changed(name, 'updated');
  }

  async delete(name: string): Promise<void> {
    this.require(name);
    // Variables first: the journal replays statements as written, whatever foreign_keys says.
    await this.store.transaction([
      { sql: 'DELETE FROM stack_variables WHERE stack = ?', params: [name] },
      { sql: 'DELETE FROM stacks WHERE name = ?', params: [name] },
    ]);
    await this.refresh(name);
    this.onChange(name, 'deleted');
  }

  private async changed(name: string, change: StackChange): Promise<Stack> {
    const stack = (await this.refresh(name)) ?? this.require(name);
    this.onChange(name, change);
    return stack;
  }

  private touch(name: string) {
    return { sql: 'UPDATE stacks SET updated_at = ? WHERE name = ?', params: [this.now().toISOString(), name] };
  }
}

function toStack(row: StackRow, variables: Record<string, string>): Stack {
  return {
    name: row.name,
    description: row.description,
    environment: row.environment,
    active: Number(row.active) === 1,
    variables,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
