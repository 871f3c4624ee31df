import {
  didYouMean,
  InvalidInputError,
  parseDuration,
  type Agent,
  type AgentGroups,
  type AgentStatus,
} from '@runner/plugin-sdk';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;
/** When an exec request names no timeout. */
export const DEFAULT_EXEC_TIMEOUT_SECONDS = 60;
/** An exec holds an HTTP request open for its whole run; an hour is the most that is sensible. */
export const MAX_EXEC_TIMEOUT_SECONDS = 3600;

const STATUSES: readonly AgentStatus[] = ['online', 'offline', 'warning', 'error'];

export interface AgentListQuery {
  limit: number;
  offset: number;
  statuses?: Set<AgentStatus>;
  name?: string;
  labels: { key: string; value?: string }[];
  /** `group=<name>`: only the group's members (the caller resolves the name to `members`). */
  group?: string;
  members?: ReadonlySet<string>;
}

function nonNegativeInteger(raw: string, field: string, max?: number): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || (max !== undefined && value > max)) {
    const range = max === undefined ? 'a whole number >= 0' : `a whole number from 0 to ${max}`;
    throw new InvalidInputError(`${field} must be ${range}, got "${raw}"`, { field });
  }
  return value;
}

/**
 * `GET /agents` query: `limit` (1-1000, default 100), `offset`, `status` (comma-separated;
 * `active` is service.md's word for online), `name` (case-insensitive substring) and `label`
 * (`key=value` or `key`, comma-separated, all must match) and `group` (an agent group's name).
 */
export function parseListQuery(query: Record<string, string>): AgentListQuery {
  const known = new Set(['limit', 'offset', 'status', 'name', 'label', 'group']);
  for (const key of Object.keys(query)) {
    if (!known.has(key)) {
      throw new InvalidInputError(`unknown query parameter "${key}" (allowed: ${[...known].join(', ')})`, {
        field: key,
      });
    }
  }
  const limit = query.limit === undefined ? DEFAULT_PAGE_SIZE : nonNegativeInteger(query.limit, 'limit', MAX_PAGE_SIZE);
  if (limit === 0) throw new InvalidInputError(`limit must be from 1 to ${MAX_PAGE_SIZE}, got "0"`, { field: 'limit' });
  const offset = query.offset === undefined ? 0 : nonNegativeInteger(query.offset, 'offset');
  let statuses: Set<AgentStatus> | undefined;
  if (query.status !== undefined && query.status !== '') {
    statuses = new Set();
    for (const part of query.status.split(',').map((s) => s.trim().toLowerCase())) {
      const status = (part === 'active' ? 'online' : part) as AgentStatus;
      if (!STATUSES.includes(status)) {
        throw new InvalidInputError(`status must be one of ${STATUSES.join(', ')} (or active), got "${part}"`, {
          field: 'status',
        });
      }
      statuses.add(status);
    }
  }
  const labels: AgentListQuery['labels'] = [];
  for (const part of (query.label ?? '').split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    const key = (eq < 0 ? part : part.slice(0, eq)).trim();
    if (key === '')
      throw new InvalidInputError(`label "${part}" has no key (use key=value or key)`, { field: 'label' });
    labels.push(eq < 0 ? { key } : { key, value: part.slice(eq + 1).trim() });
  }
  return {
    limit,
    offset,
    statuses,
    name: query.name === '' ? undefined : query.name?.toLowerCase(),
    labels,
    group: query.group === '' ? undefined : query.group,
  };
}

/** Filters, sorts by name and pages; `total` counts the filtered agents before paging. */
export function listAgents(agents: Agent[], query: AgentListQuery): { agents: Agent[]; total: number } {
  const matching = agents
    .filter((a) => query.statuses === undefined || query.statuses.has(a.status))
    .filter((a) => query.name === undefined || a.name.toLowerCase().includes(query.name))
    .filter((a) => query.members === undefined || query.members.has(a.name))
    .filter((a) =>
      query.labels.every(({ key, value }) =>
        value === undefined ? Object.hasOwn(a.labels ?? {}, key) : a.labels?.[key] === value,
      ),
    )
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { agents: matching.slice(query.offset, query.offset + query.limit), total: matching.length };
}

/** The members of the `group` filter's group; a 400 naming the nearest group for an unknown one. */
export function groupMembers(groups: AgentGroups | undefined, name: string): string[] {
  if (!groups)
    throw new InvalidInputError('group: agent groups are not available (the agent-groups plugin is not loaded)', {
      field: 'group',
    });
  const group = groups.get(name);
  if (group) return group.members;
  const names = groups.list().map((g) => g.name);
  throw new InvalidInputError(`group: unknown agent group "${name}"${didYouMean(name, names)}`, { field: 'group' });
}

export interface ExecRequest {
  command: string | string[];
  timeoutMs: number;
  cwd?: string;
}

/** `POST /agents/:name/exec` body: `{command: string | string[], timeout?: duration, cwd?: string}`. */
export function parseExecBody(body: unknown): ExecRequest {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidInputError('the body must be a JSON object such as {"command": "uptime"}', { field: 'command' });
  }
  const fields = body as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!['command', 'timeout', 'cwd'].includes(key)) {
      throw new InvalidInputError(`unknown field "${key}" (allowed: command, timeout, cwd)`, { field: key });
    }
  }
  const { command } = fields;
  if (typeof command === 'string') {
    if (command.trim() === '') throw new InvalidInputError('command must not be empty', { field: 'command' });
  } else if (Array.isArray(command)) {
    if (command.length === 0) throw new InvalidInputError('command must not be an empty list', { field: 'command' });
    command.forEach((part, i) => {
      if (typeof part !== 'string') {
        throw new InvalidInputError(`command[${i}] must be a string, got ${jsonType(part)}`, {
          field: `command.${i}`,
        });
      }
    });
    if ((command[0] as string).trim() === '') {
      throw new InvalidInputError('command[0] (the program) must not be empty', { field: 'command.0' });
    }
  } else {
    throw new InvalidInputError(
      `command must be a string (run by the agent's shell) or a list of strings (program and arguments), got ${jsonType(command)}`,
      { field: 'command' },
    );
  }
  let timeoutSeconds = DEFAULT_EXEC_TIMEOUT_SECONDS;
  if (fields.timeout !== undefined) {
    // The one duration grammar (the SDK's): seconds, or one number and one unit ("90s", "1.5h").
    let parsed: number | undefined;
    let why = '';
    try {
      if (typeof fields.timeout === 'number' || typeof fields.timeout === 'string')
        parsed = parseDuration(fields.timeout) / 1000;
    } catch (error) {
      why = `: ${(error as Error).message}`;
    }
    if (parsed === undefined || parsed <= 0 || parsed > MAX_EXEC_TIMEOUT_SECONDS) {
      throw new InvalidInputError(
        `timeout must be seconds or a duration such as "30s", "5m" (more than 0, at most ${MAX_EXEC_TIMEOUT_SECONDS} s), got ${JSON.stringify(fields.timeout)}${why}`,
        { field: 'timeout' },
      );
    }
    timeoutSeconds = parsed;
  }
  let cwd: string | undefined;
  if (fields.cwd !== undefined) {
    if (typeof fields.cwd !== 'string' || fields.cwd.trim() === '' || fields.cwd.includes('\0')) {
      throw new InvalidInputError(`cwd must be a non-empty path, got ${JSON.stringify(fields.cwd)}`, { field: 'cwd' });
    }
    cwd = fields.cwd;
  }
  return { command: command as string | string[], timeoutMs: Math.round(timeoutSeconds * 1000), cwd };
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
