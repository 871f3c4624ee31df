import type { IncomingMessage } from 'node:http';
import { plugin as storePlugin } from '@runner/plugin-store';
import { StoreRef, type GuardContext, type HttpMethod, type Permission, type Store } from '@runner/plugin-sdk';
import { createTestKernel, type TestKernel } from '@runner/plugin-sdk/testing';
import { Accounts } from './accounts.js';
import { AuditLog } from './audit-log.js';
import { Authenticator } from './authenticator.js';
import { authGuards } from './guards.js';
import { LoginThrottle } from './login-throttle.js';
import { sha256 } from './accounts.js';

export const LOCAL_TOKEN = 'rnr_local_test-token-of-this-start';

export interface AuthParts {
  kernel: TestKernel;
  store: Store;
  accounts: Accounts;
  authenticator: Authenticator;
  audit: AuditLog;
  /** Runs the three guards in order over a request; resolves with the context, rejects as a guard refuses. */
  pass(request: FakeRequest): Promise<GuardContext & { finish(status: number): void }>;
}

export interface FakeRequest {
  method: HttpMethod | 'WS';
  path: string;
  permission: Permission;
  headers?: Record<string, string>;
  address?: string;
}

/** The auth parts over a real store in a temporary data directory (the store plugin in a test kernel). */
export async function authParts(options: { enabled?: boolean; now?: () => number } = {}): Promise<AuthParts> {
  const kernel = await createTestKernel({ plugins: [storePlugin], profile: 'master' });
  const store = kernel.get(StoreRef);
  const accounts = new Accounts(store);
  await accounts.open(Math.floor(Date.now() / 1000));
  const now = options.now ?? Date.now;
  const authenticator = new Authenticator(
    accounts,
    Buffer.from('a-test-secret-of-at-least-32-characters'),
    sha256(LOCAL_TOKEN),
    new LoginThrottle(3, now),
    3_600_000,
    now,
  );
  const audit = new AuditLog(store, silentLogger);
  await audit.open();
  const guards = authGuards({ enabled: options.enabled ?? true, authenticator, audit });
  const pass = async (request: FakeRequest) => {
    const finishers: ((status: number) => void)[] = [];
    const context = {
      route: {
        method: request.method,
        path: `/api/v1${request.path}`,
        permission: request.permission,
        summary: 'test route',
        kind: request.method === 'WS' ? 'websocket' : 'api',
        mutating: !['GET', 'WS'].includes(request.method),
      },
      req: { headers: request.headers ?? {}, url: `/api/v1${request.path}` } as unknown as IncomingMessage,
      remoteAddress: request.address ?? '127.0.0.1',
      requestId: 'req-1',
      principal: undefined,
      onFinish: (callback: (status: number) => void) => finishers.push(callback),
      finish: (status: number) => finishers.forEach((f) => f(status)),
    } satisfies GuardContext & { finish(status: number): void };
    for (const guard of guards) await guard.check(context);
    return context;
  };
  return { kernel, store, accounts, authenticator, audit, pass };
}

const noop = () => undefined;
export const silentLogger = { debug: noop, info: noop, warn: noop, error: noop, child: () => silentLogger };

export const basic = (user: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
