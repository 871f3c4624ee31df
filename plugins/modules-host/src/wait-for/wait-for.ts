import { connect } from 'node:net';
import { readFile, stat } from 'node:fs/promises';
import {
  parseDurationArgument,
  type LuaCallContext,
  type LuaModuleImplementation,
  type LuaValue,
} from '@runner/plugin-sdk';
import { options, optString, requireString } from '../host/args.js';
import { runCommand } from '../host/command.js';
import type { waitForModule } from './spec.js';

/** What a check saw: null when the condition holds, else what it found instead. */
type Check = () => Promise<string | null>;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

/** Checks until it holds or the time is up: the seconds waited, or an error with what was last seen. */
export async function poll(
  call: LuaCallContext,
  what: string,
  o: Record<string, LuaValue>,
  check: Check,
): Promise<number> {
  const timeoutMs = o.timeout === undefined ? 60_000 : parseDurationArgument(o.timeout, `wait_for ${what}: timeout`);
  const intervalMs = o.interval === undefined ? 1_000 : parseDurationArgument(o.interval, `wait_for ${what}: interval`);
  const started = Date.now();
  for (;;) {
    const seen = await check();
    const waited = Date.now() - started;
    if (seen === null) return Math.round(waited) / 1000;
    if (waited + intervalMs > timeoutMs)
      throw new Error(`wait_for.${what}: not ready after ${(waited / 1000).toFixed(1)}s: ${seen}`);
    await sleep(intervalMs, call.signal);
  }
}

function tcp(host: string, port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2_000 });
    socket.once('connect', () => (socket.destroy(), resolve(null)));
    socket.once('timeout', () => (socket.destroy(), resolve('connection timed out')));
    socket.once('error', (error) => resolve(error.message));
  });
}

const WAIT = ['timeout', 'interval'] as const;

export function createWaitForModule(): LuaModuleImplementation<keyof typeof waitForModule.functions> {
  return {
    async port(call, hostArg, portArg, optsArg) {
      const host = requireString('wait_for.port', hostArg, 1, 'a host');
      if (typeof portArg !== 'number' || !Number.isInteger(portArg) || portArg < 1 || portArg > 65535)
        throw new Error('wait_for.port: argument 2 must be a port number');
      const o = options('wait_for.port', optsArg, 3, [...WAIT, 'state'] as const);
      const closed = optString('wait_for.port', 'state', o.state) === 'closed';
      return poll(call, 'port', o, async () => {
        const failure = await tcp(host, portArg);
        if (closed) return failure === null ? `${host}:${portArg} is open` : null;
        return failure === null ? null : `${host}:${portArg}: ${failure}`;
      });
    },
    async file(call, pathArg, optsArg) {
      const path = requireString('wait_for.file', pathArg, 1, 'a path');
      const o = options('wait_for.file', optsArg, 2, [...WAIT, 'state', 'contains'] as const);
      const absent = optString('wait_for.file', 'state', o.state) === 'absent';
      const contains = optString('wait_for.file', 'contains', o.contains);
      return poll(call, 'file', o, async () => {
        const exists = await stat(path).then(
          () => true,
          () => false,
        );
        if (absent) return exists ? `${path} exists` : null;
        if (!exists) return `${path} does not exist`;
        if (contains !== undefined && !(await readFile(path, 'utf8')).includes(contains))
          return `${path} does not contain ${JSON.stringify(contains)}`;
        return null;
      });
    },
    async http(call, urlArg, optsArg) {
      const url = requireString('wait_for.http', urlArg, 1, 'a URL');
      const o = options('wait_for.http', optsArg, 2, [...WAIT, 'status', 'body_contains'] as const);
      const status = typeof o.status === 'number' ? o.status : 200;
      const contains = optString('wait_for.http', 'body_contains', o.body_contains);
      return poll(call, 'http', o, async () => {
        try {
          const response = await fetch(url, { signal: AbortSignal.any([call.signal, AbortSignal.timeout(5_000)]) });
          const body = await response.text();
          if (response.status !== status) return `status ${response.status}`;
          return contains !== undefined && !body.includes(contains) ? `body without ${JSON.stringify(contains)}` : null;
        } catch (error) {
          if (call.signal.aborted) throw error;
          const cause = (error as Error).cause;
          return cause instanceof Error ? cause.message : (error as Error).message;
        }
      });
    },
    async command(call, cmdArg, optsArg) {
      const cmd = requireString('wait_for.command', cmdArg, 1, 'a command');
      const o = options('wait_for.command', optsArg, 2, WAIT);
      if (call.dryRun) return 0;
      return poll(call, 'command', o, async () => {
        const r = await runCommand(['/bin/sh', '-c', cmd], { signal: call.signal });
        return r.code === 0
          ? null
          : `exit ${r.code ?? 'by signal'}${r.stderr.trim() ? `: ${r.stderr.trim().slice(0, 200)}` : ''}`;
      });
    },
  };
}
