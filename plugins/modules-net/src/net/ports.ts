import { connect } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { InvalidInputError, type LuaCallContext, type LuaValue } from '@runner/plugin-sdk';
import { cancelled } from './abort.js';
import { formatDuration } from '@runner/plugin-sdk';
import { describe, durationOption, readOptions, requirePort, requireString } from './args.js';

export const DEFAULT_PORT_TIMEOUT_MS = 5_000;
export const DEFAULT_WAIT_TIMEOUT_MS = 60_000;
export const DEFAULT_WAIT_INTERVAL_MS = 1_000;

interface Probe {
  open: boolean;
  /** Why it is not open (refused, unreachable, no answer within...). */
  detail?: string;
}

/**
 * One TCP connection attempt. Anything short of a completed handshake counts as closed, including a
 * name that does not resolve: the question is "can I connect", and the detail says why not.
 */
export function probePort(
  fn: string,
  host: string,
  port: number,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<Probe> {
  return new Promise((resolvePromise, reject) => {
    const socket = connect({ host, port });
    const finish = (outcome: Probe | Error): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolvePromise(outcome);
    };
    const onAbort = (): void => finish(cancelled(fn, `${host}:${port}`, signal));
    const timer = setTimeout(
      () => finish({ open: false, detail: `no answer within ${formatDuration(timeoutMs)}` }),
      timeoutMs,
    );
    socket.once('connect', () => finish({ open: true }));
    socket.once('error', (error) => finish({ open: false, detail: error.message }));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** `net.port_open(host, port [, timeout])` */
export async function portOpen(
  call: LuaCallContext,
  hostArg: LuaValue,
  portArg: LuaValue,
  timeoutArg: LuaValue,
): Promise<boolean> {
  const fn = 'net.port_open';
  const host = requireString(fn, 1, 'host name or address', hostArg);
  const port = requirePort(fn, 2, portArg);
  const timeoutMs = durationOption(fn, 'timeout (argument 3)', timeoutArg, DEFAULT_PORT_TIMEOUT_MS);
  const probe = await probePort(fn, host, port, timeoutMs, call.signal);
  if (!probe.open) call.logger.debug(`${fn}: ${host}:${port} is not open: ${probe.detail}`);
  return probe.open;
}

/** `net.wait_for_port(host, port [, {timeout, interval, state}])`: returns the seconds it waited. */
export async function waitForPort(
  call: LuaCallContext,
  hostArg: LuaValue,
  portArg: LuaValue,
  optsArg: LuaValue,
): Promise<number> {
  const fn = 'net.wait_for_port';
  const host = requireString(fn, 1, 'host name or address', hostArg);
  const port = requirePort(fn, 2, portArg);
  const opts = readOptions(fn, 3, optsArg, ['timeout', 'interval', 'state']);
  const timeoutMs = durationOption(fn, 'timeout', opts.timeout, DEFAULT_WAIT_TIMEOUT_MS);
  const intervalMs = durationOption(fn, 'interval', opts.interval, DEFAULT_WAIT_INTERVAL_MS);
  const state = opts.state ?? 'open';
  if (state !== 'open' && state !== 'closed') {
    throw new InvalidInputError(`${fn}: state must be "open" or "closed", got ${describe(state)}`);
  }
  const wantOpen = state === 'open';
  const started = performance.now();
  const deadlineAt = started + timeoutMs;
  let attempts = 0;
  let last = '';
  for (;;) {
    attempts++;
    const attemptStarted = performance.now();
    // An attempt may take as long as an interval (at least 1 s, for slow handshakes), never past the deadline.
    const attemptMs = Math.max(1, Math.min(deadlineAt - attemptStarted, Math.max(intervalMs, 1_000)));
    const probe = await probePort(fn, host, port, attemptMs, call.signal);
    if (probe.open === wantOpen) return Math.round(performance.now() - started) / 1000;
    last = probe.open ? 'it accepted a connection' : (probe.detail ?? 'closed');
    const now = performance.now();
    if (now >= deadlineAt) {
      throw new Error(
        `${fn}: ${host}:${port} was not ${state} after ${formatDuration(timeoutMs)} (${attempts} attempts; last: ${last})`,
      );
    }
    call.logger.debug(`${fn}: ${host}:${port} is not ${state} yet`, { attempt: attempts, detail: last });
    const pause = Math.min(intervalMs - (now - attemptStarted), deadlineAt - now);
    if (pause > 0) {
      try {
        await delay(pause, undefined, { signal: call.signal });
      } catch {
        throw cancelled(fn, `waiting for ${host}:${port}`, call.signal);
      }
    }
  }
}
