import { createHmac, timingSafeEqual } from 'node:crypto';
import { UnauthorizedError } from '@runner/plugin-sdk';

const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;

/**
 * Checks a push notification's `X-Hub-Signature-256` (GitHub's form, also sent by Gitea and
 * Forgejo): `sha256=` and the hex HMAC-SHA256 of the body's bytes under the shared secret,
 * compared in constant time. Throws a 401 without saying which part was wrong.
 */
export function checkSignature(
  secret: string,
  body: Uint8Array | undefined,
  header: string | string[] | undefined,
): void {
  if (!secret)
    throw new UnauthorizedError('the GitOps webhook is off on this master: gitops.webhook_secret is not set');
  const match = typeof header === 'string' ? SIGNATURE.exec(header) : null;
  const expected = createHmac('sha256', secret)
    .update(body ?? new Uint8Array())
    .digest();
  // Both 32 bytes once the header has the form: timingSafeEqual needs equal lengths.
  if (!match || !timingSafeEqual(Buffer.from(match[1] as string, 'hex'), expected))
    throw new UnauthorizedError(
      'the X-Hub-Signature-256 header is missing or does not match the body signed with gitops.webhook_secret',
    );
}

/** The header value a sender computes, for tests and for scripts that call the webhook. */
export function signature(secret: string, body: string | Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}
