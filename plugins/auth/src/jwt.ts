import { createHmac, timingSafeEqual } from 'node:crypto';

/** The claims of a session token. */
export interface SessionClaims {
  /** User id. */
  sub: string;
  /** User name, for reading; the role is looked up from the user on every request. */
  name: string;
  /** Token id: logout revokes it. */
  jti: string;
  /** Unix seconds. */
  iat: number;
  /** Issued at, Unix ms: a password change ends the sessions issued before it, to the millisecond. */
  ims?: number;
  exp: number;
}

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

/** A compact JWS (HS256) over `claims`. */
export function signJwt(claims: SessionClaims, secret: Buffer): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const signature = createHmac('sha256', secret).update(`${HEADER}.${payload}`).digest('base64url');
  return `${HEADER}.${payload}.${signature}`;
}

/**
 * The claims of a token signed with `secret`, or a reason it is refused. Only HS256 is accepted
 * (the header must be exactly ours: no `alg: none`, no key confusion).
 */
export function verifyJwt(
  token: string,
  secret: Buffer,
  nowSeconds: number,
): { claims: SessionClaims } | { refused: string } {
  const parts = token.split('.');
  if (parts.length !== 3) return { refused: 'malformed token' };
  const [header, payload, signature] = parts;
  if (header !== HEADER) return { refused: 'unsupported token header' };
  const expected = createHmac('sha256', secret).update(`${header}.${payload}`).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { refused: 'bad signature' };
  let claims: SessionClaims;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as SessionClaims;
  } catch {
    return { refused: 'malformed claims' };
  }
  if (typeof claims.sub !== 'string' || typeof claims.jti !== 'string' || typeof claims.exp !== 'number') {
    return { refused: 'malformed claims' };
  }
  if (claims.exp <= nowSeconds) return { refused: 'expired' };
  return { claims };
}
