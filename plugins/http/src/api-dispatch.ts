// One API request through the router: guards, body, schema checks, handler, answer. Kept apart
// from the router so the order of these steps, which security depends on, reads in one place.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isThenable, STREAMED, type HttpMethod, type HttpRequest, type Principal } from '@runner/plugin-sdk';
import type { LiveStreams } from './live-streams.js';
import type { Request } from 'polka';
import { finalStatus, type GuardChain } from './guard-chain.js';
import { hasRequestBody, readJsonBodyAndBytes } from './json-body.js';
import { API_PREFIX, type CompiledRoute } from './route-declaration.js';
import { firstValues, isReply } from './request-parts.js';

/** What dispatching needs of the router: its guards and its two ways of answering. */
export interface DispatchPipeline {
  guards: GuardChain;
  writeJson(
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Readonly<Record<string, string>>,
  ): void;
  sendError(req: IncomingMessage, res: ServerResponse, error: unknown): void;
  /** Streaming answers (server-sent events) are kept here with their principal. */
  streams: LiveStreams;
}

/** Headers of an answer that adds none of its own (compared by identity: nothing to copy). */
export const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * Guards, body, checks, handler and answer, without a promise or a microtask turn where no step
 * needs one: a cached list answered from memory passes every step synchronously, and what each
 * await costs (a promise, a turn of the microtask queue, garbage) showed in its tail latency
 * under load. Guards always run before the body is read: an unauthenticated client cannot make
 * us buffer a megabyte.
 */
export function dispatchRoute(
  pipeline: DispatchPipeline,
  req: Request,
  res: ServerResponse,
  route: CompiledRoute,
): void {
  const requestId = String(res.getHeader('x-request-id'));
  try {
    const principal = pipeline.guards.runNow(route.meta, req, requestId, res, () => finalStatus(res));
    if (isThenable(principal) || hasRequestBody(req)) {
      void dispatchAsync(pipeline, req, res, route, requestId, principal);
      return;
    }
    const result = callHandler(req, res, route, requestId, principal, undefined);
    if (isThenable(result)) void answerWhenDone(pipeline, req, res, result, principal);
    else answer(pipeline, req, res, result, principal);
  } catch (error) {
    pipeline.sendError(req, res, error);
  }
}

/** `dispatchRoute` once a guard answered with a promise or there is a body to read. */
async function dispatchAsync(
  pipeline: DispatchPipeline,
  req: Request,
  res: ServerResponse,
  route: CompiledRoute,
  requestId: string,
  principalSoon: Principal | undefined | Promise<Principal | undefined>,
): Promise<void> {
  try {
    const principal = await principalSoon;
    const body = await readJsonBodyAndBytes(req, route.bodyLimit, route.spec.formField);
    answer(
      pipeline,
      req,
      res,
      await callHandler(req, res, route, requestId, principal, body.value, body.bytes),
      principal,
    );
  } catch (error) {
    pipeline.sendError(req, res, error);
  }
}

async function answerWhenDone(
  pipeline: DispatchPipeline,
  req: Request,
  res: ServerResponse,
  result: PromiseLike<unknown>,
  principal: Principal | undefined,
): Promise<void> {
  try {
    answer(pipeline, req, res, await result, principal);
  } catch (error) {
    pipeline.sendError(req, res, error);
  }
}

/** Checks params, query and body against the route's schemas and calls its handler. */
function callHandler(
  req: Request,
  res: ServerResponse,
  route: CompiledRoute,
  requestId: string,
  principal: Principal | undefined,
  rawBody: unknown,
  bodyBytes?: Uint8Array,
): unknown {
  const rawQuery = firstValues(req.query as Record<string, string | string[] | undefined>);
  const request: HttpRequest = {
    // HEAD reaches GET routes; Node leaves the body out of the answer.
    method: (req.method === 'HEAD' ? 'GET' : req.method) as HttpMethod,
    path: req.path.slice(API_PREFIX.length) || '/',
    params: (route.params ? route.params.check({ ...req.params }) : { ...req.params }) as Record<string, string>,
    query: (route.query ? route.query.check(rawQuery) : rawQuery) as Record<string, string>,
    headers: req.headers,
    body: route.body ? route.body.check(rawBody) : rawBody,
    bodyBytes,
    remoteAddress: req.socket.remoteAddress ?? '',
    requestId,
    principal,
    raw: { req, res },
  };
  return route.spec.handler(request as never);
}

/** A handler's result as the answer: streamed already, a reply, nothing (204) or a body. */
function answer(
  pipeline: DispatchPipeline,
  req: Request,
  res: ServerResponse,
  result: unknown,
  principal: Principal | undefined,
): void {
  if (result === STREAMED) {
    if (principal && !res.writableEnded) {
      // Ended (not destroyed): the client reads the stream's end, not a broken connection.
      const untrack = pipeline.streams.track(principal, () => res.end());
      res.on('close', untrack);
    }
    return;
  }
  if (isReply(result)) pipeline.writeJson(req, res, result.status, result.body, result.headers ?? NO_HEADERS);
  else if (result === undefined) pipeline.writeJson(req, res, 204, undefined, NO_HEADERS);
  else pipeline.writeJson(req, res, 200, result, NO_HEADERS);
}
