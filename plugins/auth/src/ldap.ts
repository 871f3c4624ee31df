import { InvalidInputError, isRole, RunnerError, type Role, type RunnerConfig } from '@runner/plugin-sdk';

/** LDAP/AD login settings (`auth.ldap.*`); undefined when `auth.ldap.url` is not set. */
export interface LdapConfig {
  url: string;
  /** Account that searches for users and groups; anonymous search without it. */
  bindDn?: string;
  bindPassword?: string;
  userBase: string;
  /** `{username}` is replaced by the escaped login name. */
  userFilter: string;
  groupBase: string;
  /** `{dn}` is replaced by the escaped user DN. */
  groupFilter: string;
  /** Group `cn` to role; the highest role of the user's groups applies. */
  groupRoles: Record<string, Role>;
  /** Role of a user in no mapped group; undefined refuses them. */
  defaultRole?: Role;
  timeoutMs: number;
}

export const LDAP_CONFIG = {
  'auth.ldap.url': {
    schema: { type: 'string', minLength: 1 },
    help: 'LDAP/AD server, e.g. ldaps://ldap.corp:636 (unset: no LDAP login)',
  },
  'auth.ldap.bind_dn': {
    schema: { type: 'string', minLength: 1 },
    help: 'DN of the account that searches users and groups (unset: anonymous search)',
  },
  'auth.ldap.bind_password': {
    schema: { type: 'string', minLength: 1 },
    help: 'password of auth.ldap.bind_dn',
    secret: true,
  },
  'auth.ldap.user_base': { schema: { type: 'string', minLength: 1 }, help: 'base DN under which users are searched' },
  'auth.ldap.user_filter': {
    schema: { type: 'string', minLength: 1 },
    default: '(uid={username})',
    help: 'filter finding a user; {username} is the login name (AD: (sAMAccountName={username}))',
  },
  'auth.ldap.group_base': {
    schema: { type: 'string', minLength: 1 },
    help: 'base DN of groups (default: auth.ldap.user_base)',
  },
  'auth.ldap.group_filter': {
    schema: { type: 'string', minLength: 1 },
    default: '(|(member={dn})(uniqueMember={dn}))',
    help: "filter finding a user's groups; {dn} is the user's DN",
  },
  'auth.ldap.group_roles': {
    schema: { type: 'object', additionalProperties: { type: 'string' } },
    default: {},
    help: 'group cn to role (admin, operator, developer, viewer); the highest applies',
  },
  'auth.ldap.default_role': {
    schema: { type: 'string', enum: ['admin', 'operator', 'developer', 'viewer'] },
    help: 'role of an LDAP user in no mapped group (unset: such users cannot log in)',
  },
} as const;

export function readLdapConfig(config: RunnerConfig): LdapConfig | undefined {
  const url = config.get<string | undefined>('auth.ldap.url');
  if (!url) return undefined;
  const userBase = config.get<string | undefined>('auth.ldap.user_base');
  if (!userBase)
    throw new InvalidInputError('auth.ldap.url is set but auth.ldap.user_base is not: where are users searched?', {
      field: 'auth.ldap.user_base',
    });
  const groupRoles: Record<string, Role> = {};
  for (const [group, role] of Object.entries(config.get<Record<string, string>>('auth.ldap.group_roles'))) {
    if (!isRole(role))
      throw new InvalidInputError(
        `auth.ldap.group_roles.${group}: "${role}" is not a role (admin, operator, developer, viewer)`,
        { field: 'auth.ldap.group_roles' },
      );
    groupRoles[group.toLowerCase()] = role;
  }
  return {
    url,
    bindDn: config.get<string | undefined>('auth.ldap.bind_dn') || undefined,
    bindPassword: config.get<string | undefined>('auth.ldap.bind_password') || undefined,
    userBase,
    userFilter: config.get<string>('auth.ldap.user_filter'),
    groupBase: config.get<string | undefined>('auth.ldap.group_base') || userBase,
    groupFilter: config.get<string>('auth.ldap.group_filter'),
    groupRoles,
    defaultRole: config.get<Role | undefined>('auth.ldap.default_role') || undefined,
    timeoutMs: 5000,
  };
}

/** RFC 4515: a value placed inside a search filter. */
export function escapeFilterValue(value: string): string {
  return value.replace(/[\\*()\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

const RANK: Record<Role, number> = { viewer: 0, developer: 1, operator: 2, admin: 3 };

/**
 * A login against the directory: find the user's DN (as the search account), bind as them with the
 * password, read their groups, map them to a role. Resolves undefined for a wrong name or password
 * (the caller answers the one 401), throws for a server that cannot be reached or a user in no
 * mapped group.
 */
export async function ldapLogin(
  config: LdapConfig,
  name: string,
  password: string,
): Promise<{ dn: string; role: Role } | undefined> {
  // An empty password is an "unauthenticated bind", which servers accept: never a login.
  if (password === '' || name === '') return undefined;
  const { Client, InvalidCredentialsError } = await import('ldapts');
  const client = new Client({ url: config.url, timeout: config.timeoutMs, connectTimeout: config.timeoutMs });
  const asSearcher = () => (config.bindDn ? client.bind(config.bindDn, config.bindPassword) : Promise.resolve());
  try {
    await asSearcher();
    const { searchEntries: users } = await client.search(config.userBase, {
      scope: 'sub',
      filter: config.userFilter.replaceAll('{username}', escapeFilterValue(name)),
      attributes: ['dn'],
      sizeLimit: 2,
    });
    if (users.length !== 1) return undefined;
    const dn = users[0].dn;
    try {
      await client.bind(dn, password);
    } catch (error) {
      if (error instanceof InvalidCredentialsError) return undefined;
      throw error;
    }
    await asSearcher();
    const { searchEntries: groups } = await client.search(config.groupBase, {
      scope: 'sub',
      filter: config.groupFilter.replaceAll('{dn}', escapeFilterValue(dn)),
      attributes: ['cn'],
    });
    const roles = groups
      .flatMap((g) => (Array.isArray(g.cn) ? g.cn : [g.cn]))
      .map((cn) => config.groupRoles[String(cn).toLowerCase()])
      .filter((r): r is Role => r !== undefined);
    const role = roles.sort((a, b) => RANK[b] - RANK[a])[0] ?? config.defaultRole;
    if (!role) {
      throw new RunnerError('forbidden', `LDAP user ${name} is in no group that auth.ldap.group_roles maps to a role`, {
        status: 403,
      });
    }
    return { dn, role };
  } catch (error) {
    if (error instanceof RunnerError) throw error;
    throw new RunnerError('ldap_unavailable', `LDAP server ${config.url}: ${(error as Error).message}`, {
      status: 503,
      cause: error,
    });
  } finally {
    await client.unbind().catch(() => undefined);
  }
}
