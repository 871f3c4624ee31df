import { open, writeFile } from 'node:fs/promises';
import {
  InvalidInputError,
  RunnerError,
  type ForwardedCallHandler,
  type MasterCallForwarder,
  type SshExecResult,
  type SshProfiles,
} from '@runner/plugin-sdk';
import type { SshActions } from './lua.js';
import { withWorkflowProfile, workflowActor, type SshFunction } from './workflow-ssh.js';

/**
 * Both ends of `ssh.*` called in the master's local executor, which holds no store and no
 * credential: the executor forwards each call (MasterCallForwarder) and the master performs it with
 * the profile (ExecutorCallServer), so keys and pinned host keys never leave the master. Local files
 * stay on the executor's side: it reads what it uploads and writes what it downloads as its own
 * user, and only bytes cross the channel, at most FORWARDED_BYTES a file.
 */

/** The module's name on the channel. */
export const SSH_MODULE = 'ssh';

/** The largest file copied through the executor (both ways): it crosses the channel in one message. */
export const FORWARDED_BYTES = 32 * 1024 * 1024;

/** A forwarded call as the executor sends it. */
export type SshCall =
  | { fn: 'exec'; profile: string; command: string; timeoutMs: number }
  | { fn: 'upload'; profile: string; remote: string; mode?: number; data: Uint8Array }
  | { fn: 'download'; profile: string; remote: string };

/** The actions of the executor's `ssh` module: each one a call the master performs. */
export function forwardedActions(forwarder: MasterCallForwarder): SshActions {
  const forward = (call: Parameters<SshActions['exec']>[0], request: SshCall) => {
    if (!call.run)
      throw new RunnerError(
        'unavailable',
        `ssh.${request.fn}: in the local executor, only a task of a run can use SSH`,
      );
    return forwarder.forward(SSH_MODULE, request, call.run, call.signal);
  };
  return {
    exec: async (call, profile, command, timeoutMs) =>
      (await forward(call, { fn: 'exec', profile, command, timeoutMs })) as SshExecResult,
    async upload(call, profile, local, remote, mode) {
      const data = await readBounded(local);
      return (await forward(call, { fn: 'upload', profile, remote, mode, data })) as { bytes: number };
    },
    async download(call, profile, remote, local) {
      const data = (await forward(call, { fn: 'download', profile, remote })) as Uint8Array;
      await writeFile(local, data, { mode: 0o600 });
      return { bytes: data.length };
    },
  };
}

/** The file's bytes, refused past FORWARDED_BYTES before reading them. */
async function readBounded(path: string): Promise<Uint8Array> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    if (size > FORWARDED_BYTES) throw tooLarge('upload', `${path} is ${size} bytes`);
    return await file.readFile();
  } finally {
    await file.close();
  }
}

function tooLarge(fn: SshFunction, what: string): RunnerError {
  return new RunnerError(
    'too_large',
    `ssh.${fn}: ${what}; at most ${FORWARDED_BYTES} bytes are copied by a task of the local executor`,
    { status: 413 },
  );
}

/**
 * The master's handler of the executor's `ssh.*` calls: the same rules as in its own runtime
 * (withWorkflowProfile), the actor and dry-run from its record of the task, and the request read as
 * untrusted input (the executor runs workflow code as another user).
 */
export function serveForwardedSsh(profiles: SshProfiles): ForwardedCallHandler {
  return async (request, caller, signal) => {
    const call = checkedCall(request);
    // The executor answers dry-run itself; a call that still comes is not done.
    if (caller.dryRun)
      throw new RunnerError('forbidden', `ssh.${call.fn}: the run is a dry-run, nothing connects`, { status: 403 });
    const actor = workflowActor(caller);
    return withWorkflowProfile(profiles, call.fn, call.profile, actor, signal, async (connection) => {
      switch (call.fn) {
        case 'exec':
          return connection.exec(call.command, { timeoutMs: call.timeoutMs, signal });
        case 'upload': {
          const data = Buffer.from(call.data.buffer, call.data.byteOffset, call.data.length);
          return connection.uploadBytes(data, call.remote, { mode: call.mode });
        }
        case 'download':
          // A larger file is refused before it is read (too_large, naming its size and this bound).
          return connection.downloadBytes(call.remote, FORWARDED_BYTES);
      }
    });
  };
}

/** The request, each field of the type its function needs. */
function checkedCall(request: unknown): SshCall {
  const call = (request ?? {}) as Record<string, unknown>;
  const fn = call.fn as SshFunction;
  const bad = (field: string) => new InvalidInputError(`ssh.${String(fn)}: forwarded call without a valid ${field}`);
  const isText = (value: unknown) => typeof value === 'string' && value !== '';
  if (!['exec', 'upload', 'download'].includes(fn)) throw bad('function');
  if (!isText(call.profile)) throw bad('profile');
  if (fn === 'exec') {
    if (!isText(call.command)) throw bad('command');
    if (typeof call.timeoutMs !== 'number' || !(call.timeoutMs > 0)) throw bad('timeout');
    return call as SshCall;
  }
  if (!isText(call.remote)) throw bad('remote path');
  if (fn === 'upload') {
    if (!(call.data instanceof Uint8Array)) throw bad('content');
    if (call.data.length > FORWARDED_BYTES) throw tooLarge('upload', `the file is ${call.data.length} bytes`);
    if (call.mode !== undefined && !(Number.isInteger(call.mode) && (call.mode as number) >= 0)) throw bad('mode');
  }
  return call as SshCall;
}
