import { InvalidInputError, parseDuration, type ConfigDeclaration, type RunnerConfig } from '@runner/plugin-sdk';
import type { AuditRetentionSettings } from './audit-retention.js';
import { LDAP_CONFIG, readLdapConfig, type LdapConfig } from './ldap.js';
import { DEFAULT_PASSWORD_RULES, type PasswordRules } from './password-policy.js';
import { OIDC_CONFIG, readOidcProviders, type OidcProvider } from './oidc.js';

/** The plugin's settings, read once at setup so a bad value fails the boot, not a request. */
export interface AuthConfig {
  enabled: boolean;
  /** Set, or undefined to use (and on first start generate) `<data-dir>/auth/jwt.secret`. */
  jwtSecret?: string;
  jwtExpiryMs: number;
  /** `--username`: the admin account to create or update at start. */
  adminUsername: string;
  /** `--password-file` / `RUNNER_AUTH_ADMIN_PASSWORD`: that account's password, when given. */
  adminPasswordFile?: string;
  adminPassword?: string;
  /** Failed logins per user and address before each further one waits. */
  failuresBeforeDelay: number;
  /** What a password being set must satisfy. */
  passwordRules: PasswordRules;
  /** Age and count limits of the audit log (audit-retention.ts). */
  auditRetention: AuditRetentionSettings;
  /** LDAP/AD login, when `auth.ldap.url` is set. */
  ldap?: LdapConfig;
  /** OpenID Connect providers (`auth.oauth.providers`). */
  oidc: OidcProvider[];
}

export const AUTH_CONFIG: ConfigDeclaration = {
  'auth.enabled': {
    schema: { type: 'boolean' },
    default: true,
    help: 'require credentials on every route except health, login and the OpenAPI document (runner server --auth on|off)',
  },
  'auth.type': {
    schema: { type: 'string', enum: ['jwt'] },
    default: 'jwt',
    help: 'session tokens issued by POST /api/v1/auth/login (service.md: jwt)',
  },
  'auth.jwt.secret': {
    schema: { type: 'string', minLength: 32 },
    help: 'HMAC key of session tokens, 32+ characters (default: generated once into <data-dir>/auth/jwt.secret)',
    secret: true,
  },
  'auth.jwt.expiry': {
    schema: { type: 'string', minLength: 1 },
    default: '24h',
    help: 'lifetime of a session token from POST /api/v1/auth/login (a duration: 30m, 24h, 7d)',
  },
  'auth.admin_username': {
    schema: { type: 'string', minLength: 1 },
    default: 'admin',
    help: 'the admin account created on first start, or set by --username with a password',
  },
  'auth.admin_password_file': {
    schema: { type: 'string', minLength: 1 },
    help: "file holding the admin account's password, set at start (runner server --password-file)",
  },
  'auth.admin_password': {
    schema: { type: 'string', minLength: 1 },
    help: "the admin account's password, set at start; give it as RUNNER_AUTH_ADMIN_PASSWORD (never as a flag: ps shows flags)",
    secret: true,
  },
  'auth.login_failures_before_delay': {
    schema: { type: 'integer', minimum: 1 },
    default: 5,
    help: 'failed logins per user and address before further attempts must wait (doubling from 1 s)',
  },
  'auth.password_min_length': {
    schema: { type: 'integer', minimum: 8, maximum: 1024 },
    default: DEFAULT_PASSWORD_RULES.minLength,
    help: 'fewest characters a new password may have (user add, passwd, your own change, the admin at start)',
  },
  'auth.password_check_common': {
    schema: { type: 'boolean' },
    default: DEFAULT_PASSWORD_RULES.checkCommon,
    help: 'refuse a new password that is a common one or the user name, give or take case and digits or symbols around it',
  },
  'audit.retention': {
    schema: { type: 'string', minLength: 1 },
    default: '90d',
    help: 'how long audit records are kept (a duration: 30d, 365d); pruned in the background, runner db stats shows them',
  },
  'audit.retention_max_records': {
    schema: { type: 'integer', minimum: 0 },
    default: 100_000,
    help: 'at most this many audit records are kept, the newest (0: no limit by count); refused requests are recorded too, so this bounds a flood',
  },
  ...LDAP_CONFIG,
  ...OIDC_CONFIG,
};

function duration(config: RunnerConfig, key: string): number {
  const raw = config.get<string>(key);
  try {
    const ms = parseDuration(raw);
    if (ms <= 0) throw new InvalidInputError('must be above zero');
    return ms;
  } catch (error) {
    throw new InvalidInputError(`config ${key} (from ${config.sourceOf(key)}): ${(error as Error).message}`, {
      field: key,
    });
  }
}

export function readAuthConfig(config: RunnerConfig): AuthConfig {
  return {
    enabled: config.get<boolean>('auth.enabled'),
    jwtSecret: config.get<string | undefined>('auth.jwt.secret') || undefined,
    jwtExpiryMs: duration(config, 'auth.jwt.expiry'),
    adminUsername: config.get<string>('auth.admin_username'),
    adminPasswordFile: config.get<string | undefined>('auth.admin_password_file') || undefined,
    adminPassword: config.get<string | undefined>('auth.admin_password') || undefined,
    failuresBeforeDelay: config.get<number>('auth.login_failures_before_delay'),
    passwordRules: {
      minLength: config.get<number>('auth.password_min_length'),
      checkCommon: config.get<boolean>('auth.password_check_common'),
    },
    auditRetention: {
      maxAgeMs: duration(config, 'audit.retention'),
      maxRecords: config.get<number>('audit.retention_max_records'),
    },
    ldap: readLdapConfig(config),
    oidc: readOidcProviders(config),
  };
}
