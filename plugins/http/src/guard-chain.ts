import type { IncomingMessage, ServerResponse } from 'node:http';
import { isThenable, type Guard, type GuardContext, type Principal, type RouteMeta } from '@runner/plugin-sdk';

/**
 * The router's ordered guards. Every way into the HTTP port (API routes, server-sent events, the
 * WebSocket upgrade, plain routes, static files) runs the same chain with the metadata of what it
 * reached, so authentication or audit added by a plugin cannot be bypassed by picking another door.
 */
export class GuardChain {
  private guards: Guard[] = [];

  add(guard: Guard): void {
    if (typeof guard.check !== 'function' || !guard.name || !Number.isFinite(guard.order)) {
      throw new TypeError('a guard needs a name, a numeric order and a check function');
    }
    if (this.guards.some((g) => g.name === guard.name)) throw new TypeError(`guard "${guard.name}" is already added`);
    // Stable: guards with the same order keep the order they were added in.
    this.guards = [...this.guards, guard].sort((a, b) => a.order - b.order);
  }

  get size(): number {
    return this.guards.length;
  }

  /**
   * Runs every guard; throws the first refusal. `res` is absent for the WebSocket upgrade, whose
   * finish callbacks run when the socket closes.
   */
  async run(
    route: RouteMeta,
    req: IncomingMessage,
    requestId: string,
    finished: { on(event: 'close', listener: () => void): unknown },
    statusOf: () => number,
  ): Promise<Principal | undefined> {
    return this.runNow(route, req, requestId, finished, statusOf);
  }

  /**
   * `run` without a promise when no guard needs one: the principal, or a promise of it from the
   * first guard that answered with one on. The busiest routes (a cached list) pass every guard
   * synchronously, and each promise and microtask turn a request costs shows in their tail latency.
   * Throws the first refusal of a synchronous guard; a later one rejects the promise.
   */
  runNow(
    route: RouteMeta,
    req: IncomingMessage,
    requestId: string,
    finished: { on(event: 'close', listener: () => void): unknown },
    statusOf: () => number,
  ): Principal | undefined | Promise<Principal | undefined> {
    const guards = this.guards;
    if (guards.length === 0) return undefined;
    const callbacks: ((status: number) => void)[] = [];
    const context: GuardContext = {
      route,
      req,
      remoteAddress: req.socket.remoteAddress ?? '',
      requestId,
      principal: undefined,
      onFinish(callback) {
        if (callbacks.length === 0) finished.on('close', () => runFinish(callbacks, statusOf()));
        callbacks.push(callback);
      },
    };
    for (let i = 0; i < guards.length; i++) {
      const pending = (guards[i] as Guard).check(context);
      if (isThenable(pending)) return finishAsync(guards, i, pending, context);
    }
    return context.principal;
  }
}

/** The rest of the chain once guard `at` answered with a promise. */
async function finishAsync(
  guards: readonly Guard[],
  at: number,
  pending: PromiseLike<unknown>,
  context: GuardContext,
): Promise<Principal | undefined> {
  await pending;
  for (let i = at + 1; i < guards.length; i++) await (guards[i] as Guard).check(context);
  return context.principal;
}

/** The status an answer ended with, or 499 (client closed) when it never finished. */
export function finalStatus(res: ServerResponse): number {
  return res.writableFinished || res.headersSent ? res.statusCode : 499;
}

function runFinish(callbacks: ((status: number) => void)[], status: number): void {
  for (const callback of callbacks) {
    try {
      callback(status);
    } catch {
      // A failing audit or metrics callback must not break the others; its owner logs its own failures.
    }
  }
}
