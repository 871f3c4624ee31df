import {
  auditNoteOf,
  ForbiddenError,
  isRunnerError,
  isThenable,
  Permissions,
  UnauthorizedError,
  type Guard,
  type GuardContext,
  type Principal,
} from '@runner/plugin-sdk';
import type { AuditLog } from './audit-log.js';
import { ANONYMOUS_ADMIN, type Authenticator } from './authenticator.js';

export const NO_CREDENTIALS =
  'authentication required: send HTTP Basic credentials, a session token from POST /api/v1/auth/login, or an API token (Authorization: Bearer)';

export interface GuardOptions {
  /** False with `--auth off`: every caller is an anonymous admin. */
  enabled: boolean;
  authenticator: Authenticator;
  audit: AuditLog;
}

/** Routes whose handlers write their own, more telling records (auth.login, auth.login_failed, auth.logout). */
const SELF_AUDITED = new Set(['/api/v1/auth/login', '/api/v1/auth/logout', '/api/v1/auth/me/password']);

/** The path of a request without its query string. */
const pathOf = (context: GuardContext) => (context.req.url ?? '').split('?')[0];

/**
 * The auth plugin's three steps of the router's guard chain: who is calling (100), may they
 * (200), and the audit record of every call that changes state (300). Refusals are audited by
 * the step that refuses.
 */
export function authGuards({ enabled, authenticator, audit }: GuardOptions): Guard[] {
  const refused = (context: GuardContext, event: string, status: number) =>
    audit.record({
      event,
      user: context.principal?.name ?? 'anonymous',
      ip: context.remoteAddress,
      resource: pathOf(context),
      action: `${context.route.method} ${context.route.path}`,
      result: 'failure',
      status,
      request_id: context.requestId,
    });

  const authentication: Guard = {
    name: 'auth.authenticate',
    order: 100,
    // Synchronous unless the credential needs a wait (Basic's password check): a request that
    // passes every guard without a promise is answered without a microtask turn (api-dispatch.ts).
    check(context) {
      if (!enabled) {
        context.principal = ANONYMOUS_ADMIN;
        return;
      }
      const isPublic = context.route.permission === Permissions.public;
      const failed = (error: unknown): void => {
        // A stale cookie must not lock anyone out of the login page or health.
        if (isPublic) return;
        if (isRunnerError(error)) refused(context, 'auth.failed', error.status);
        throw error;
      };
      const found = (principal: Principal | undefined): void => {
        context.principal = principal;
        if (!principal && !isPublic) {
          refused(context, 'auth.missing', 401);
          throw new UnauthorizedError(NO_CREDENTIALS);
        }
      };
      let answer: Principal | undefined | Promise<Principal | undefined>;
      try {
        answer = authenticator.authenticate(context.req.headers, context.remoteAddress, context.route.mutating);
      } catch (error) {
        return failed(error);
      }
      if (!isThenable(answer)) return found(answer);
      return answer.then(found, failed);
    },
  };
  const authorization: Guard = {
    name: 'auth.authorize',
    order: 200,
    check(context) {
      const { permission, method, path } = context.route;
      if (permission === Permissions.public) return;
      const principal = context.principal;
      if (!principal) throw new UnauthorizedError(NO_CREDENTIALS);
      if (principal.can(permission)) return;
      refused(context, 'access.denied', 403);
      throw new ForbiddenError(
        `${principal.name} (role ${principal.role}) lacks the permission ${permission}, needed for ${method} ${path}`,
      );
    },
  };

  const auditing: Guard = {
    name: 'auth.audit',
    order: 300,
    check(context) {
      if (!context.route.mutating || SELF_AUDITED.has(context.route.path)) return;
      context.onFinish((status) =>
        audit.record({
          event: 'api.call',
          user: context.principal?.name ?? 'anonymous',
          ip: context.remoteAddress,
          resource: pathOf(context),
          action: `${context.route.method} ${context.route.path}`,
          result: status < 400 ? 'success' : 'failure',
          status,
          request_id: context.requestId,
          detail: auditNoteOf(context.req),
        }),
      );
    },
  };

  return [authentication, authorization, auditing];
}
