import {
  ForbiddenError,
  InvalidInputError,
  isRole,
  NotFoundError,
  RunnerError,
  type Role,
  type RunnerConfig,
} from '@runner/plugin-sdk';
import type { Configuration } from 'openid-client';
import type { Accounts, User } from './accounts.js';

/** One `auth.oauth.providers[]` entry. */
export interface OidcProvider {
  /** In the login URL: `/api/v1/auth/oidc/<name>/login`. */
  name: string;
  /** What the login page's button says: "Sign in with <displayName>" (default: the name). */
  displayName: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  scope: string;
  /** Claim holding the user's groups or roles (`groups`). */
  roleClaim: string;
  /** Claim value to role; the highest applies. */
  roleMapping: Record<string, Role>;
  defaultRole?: Role;
  /** Where the provider sends the browser back; default from the request's Host. */
  redirectUri?: string;
}

export const OIDC_CONFIG = {
  'auth.oauth.providers': {
    schema: { type: 'array', items: { type: 'object' } },
    default: [],
    help: 'OpenID Connect providers: name, display_name, issuer, client_id, client_secret, scope, role_claim, role_mapping, default_role, redirect_uri',
    // Each entry holds a client_secret.
    secret: true,
  },
} as const;

const RANK: Record<Role, number> = { viewer: 0, developer: 1, operator: 2, admin: 3 };
const LOOPBACK = /^https?:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?(\/|$)/;

export function readOidcProviders(config: RunnerConfig): OidcProvider[] {
  const raw = config.get<Record<string, unknown>[]>('auth.oauth.providers');
  return raw.map((entry, index) => {
    const where = `auth.oauth.providers[${index}]`;
    const text = (key: string, required = true): string | undefined => {
      const value = entry[key];
      if (value === undefined && !required) return undefined;
      if (typeof value !== 'string' || value === '') {
        throw new InvalidInputError(`${where}.${key} must be a non-empty string`, { field: `${where}.${key}` });
      }
      return value;
    };
    const name = text('name')!;
    if (!/^[a-z0-9-]+$/.test(name))
      throw new InvalidInputError(`${where}.name "${name}": use a-z, 0-9 and -`, { field: `${where}.name` });
    const mapping = (entry.role_mapping ?? {}) as Record<string, unknown>;
    const roleMapping: Record<string, Role> = {};
    for (const [value, role] of Object.entries(mapping)) {
      if (!isRole(role))
        throw new InvalidInputError(`${where}.role_mapping.${value}: "${String(role)}" is not a role`, {
          field: `${where}.role_mapping`,
        });
      roleMapping[value] = role;
    }
    const defaultRole = text('default_role', false);
    if (defaultRole !== undefined && !isRole(defaultRole)) {
      throw new InvalidInputError(`${where}.default_role: "${defaultRole}" is not a role`, {
        field: `${where}.default_role`,
      });
    }
    return {
      name,
      displayName: text('display_name', false) ?? name,
      issuer: text('issuer')!,
      clientId: text('client_id')!,
      clientSecret: text('client_secret')!,
      scope: text('scope', false) ?? 'openid profile email',
      roleClaim: text('role_claim', false) ?? 'groups',
      roleMapping,
      defaultRole: defaultRole as Role | undefined,
      redirectUri: text('redirect_uri', false),
    };
  });
}

interface Pending {
  provider: string;
  verifier: string;
  nonce: string;
  redirectUri: string;
  expires: number;
}

const PENDING_MS = 10 * 60_000;

/**
 * The authorization-code flow with PKCE against each configured provider (openid-client): `start`
 * gives the provider's URL and a state kept here for ten minutes, `finish` trades the code for
 * tokens, reads the user's claims and returns the local record of that user with the mapped role.
 */
export class OidcLogins {
  private readonly configs = new Map<string, Promise<Configuration>>();
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly providers: readonly OidcProvider[],
    private readonly accounts: Accounts,
  ) {}

  names(): string[] {
    return this.providers.map((p) => p.name);
  }

  async start(name: string, requestBase: string): Promise<{ url: string; state: string }> {
    const provider = this.provider(name);
    const oidc = await import('openid-client');
    const config = await this.configuration(provider);
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const redirectUri = provider.redirectUri ?? `${requestBase}/api/v1/auth/oidc/${name}/callback`;
    this.sweep();
    this.pending.set(state, { provider: name, verifier, nonce, redirectUri, expires: Date.now() + PENDING_MS });
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: provider.scope,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url: url.href, state };
  }

  /** `callbackUrl` is the URL the provider sent the browser to; `browserState` the state cookie it carries. */
  async finish(name: string, callbackUrl: URL, browserState: string | undefined): Promise<User> {
    const provider = this.provider(name);
    const state = callbackUrl.searchParams.get('state') ?? '';
    const pending = this.pending.get(state);
    // The state must be one this master handed out, to this browser (its cookie), for this provider.
    if (!pending || pending.expires < Date.now() || pending.provider !== name || browserState !== state) {
      throw new ForbiddenError('this login was not started here or has expired; start again');
    }
    this.pending.delete(state);
    const oidc = await import('openid-client');
    const config = await this.configuration(provider);
    const current = new URL(pending.redirectUri);
    current.search = callbackUrl.search;
    let claims: Record<string, unknown>;
    try {
      const tokens = await oidc.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: pending.verifier,
        expectedState: state,
        expectedNonce: pending.nonce,
      });
      const idClaims = tokens.claims();
      if (!idClaims) throw new Error('no ID token in the answer');
      const info = await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub);
      claims = { ...idClaims, ...info };
    } catch (error) {
      throw new RunnerError('oidc_failed', `login with ${name} failed: ${(error as Error).message}`, {
        status: 401,
        cause: error,
      });
    }
    const userName = String(claims.preferred_username ?? claims.email ?? claims.sub);
    const values = claims[provider.roleClaim];
    const list = (Array.isArray(values) ? values : values === undefined ? [] : [values]).map(String);
    const roles = list.map((v) => provider.roleMapping[v]).filter((r): r is Role => r !== undefined);
    const role = roles.sort((a, b) => RANK[b] - RANK[a])[0] ?? provider.defaultRole;
    if (!role)
      throw new ForbiddenError(`${userName} has no ${provider.roleClaim} that ${name}'s role_mapping maps to a role`);
    return this.accounts.upsertExternal(userName, role, new Date(), '!oidc');
  }

  private provider(name: string): OidcProvider {
    const provider = this.providers.find((p) => p.name === name);
    if (!provider)
      throw new NotFoundError(
        `no OpenID Connect provider "${name}" (configured: ${this.names().join(', ') || 'none'})`,
      );
    return provider;
  }

  private configuration(provider: OidcProvider): Promise<Configuration> {
    let config = this.configs.get(provider.name);
    if (!config) {
      config = import('openid-client').then((oidc) =>
        oidc.discovery(new URL(provider.issuer), provider.clientId, provider.clientSecret, undefined, {
          // Plain HTTP only for a provider on this host (tests, a local IdP); TLS otherwise.
          execute: LOOPBACK.test(provider.issuer) ? [oidc.allowInsecureRequests] : [],
        }),
      );
      // A provider that was down is asked again next time.
      config.catch(() => this.configs.delete(provider.name));
      this.configs.set(provider.name, config);
    }
    return config;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [state, p] of this.pending) if (p.expires < now) this.pending.delete(state);
  }
}
