// The embedded master: a `runner server` child process with its own data directory, on free
// loopback ports, found through the master.json it writes and reached with the local credential
// of that data directory. The shell stops it (SIGTERM, then SIGKILL after a grace period) when
// the app quits.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { RunnerError, credentialFor, localMaster, sleep } from '@runner/plugin-sdk';
import type { RunnerCommand } from './runner-binary.js';

export interface EmbeddedMasterOptions {
  runner: RunnerCommand;
  /** The master's data directory (the app keeps it under its userData directory). */
  dataDir: string;
  /** The environment the child inherits (the app's own). */
  env: NodeJS.ProcessEnv;
  /** How long the master may take to write master.json. */
  startTimeoutMs?: number;
  /** How long the master may take to stop after SIGTERM before it is killed. */
  stopTimeoutMs?: number;
}

export interface EmbeddedMaster {
  /** `http://127.0.0.1:<port>`: the master's REST API and UI. */
  readonly base: string;
  readonly pid: number;
  /**
   * `Bearer <local token>` of the data directory, or undefined while the master has written none
   * (read again on each call until found: the auth plugin may write it after master.json).
   */
  authorization(): Promise<string | undefined>;
  /** Resolves when the process has exited, whoever stopped it. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last lines the master printed, for an error message when it dies. */
  output(): string;
  /** SIGTERM, wait, SIGKILL after the grace period; resolves once the process is gone. */
  stop(): Promise<void>;
}

/** The arguments of `runner server` for an embedded master: every port free, every socket loopback only. */
export function embeddedServerArgs(dataDir: string): string[] {
  return [
    '--data-dir',
    dataDir,
    'server',
    '--http-port',
    '0',
    '--bind-address',
    '127.0.0.1',
    // Agents of other hosts cannot reach a loopback gRPC port; a desktop user who wants them
    // runs `runner server` as a service and connects to it as a remote master.
    '--port',
    '0',
    '--grpc-bind-address',
    '127.0.0.1',
  ];
}

const OUTPUT_LINES = 40;

/** Starts the master and resolves once its REST API is up (master.json names this process). */
export async function startEmbeddedMaster(options: EmbeddedMasterOptions): Promise<EmbeddedMaster> {
  const { runner, dataDir } = options;
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const child: ChildProcess = spawn(runner.command, [...runner.args, ...embeddedServerArgs(dataDir)], {
    env: { ...options.env, ...runner.env, RUNNER_DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
    windowsHide: true,
  });
  const lines: string[] = [];
  const keep = (chunk: Buffer): void => {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (lines.length > OUTPUT_LINES) lines.splice(0, lines.length - OUTPUT_LINES);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const output = (): string => lines.join('\n');

  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolve(exitInfo);
    });
    child.once('error', (error) => {
      lines.push(`${runner.command}: ${error.message}`);
      exitInfo = { code: null, signal: null };
      resolve(exitInfo);
    });
  });

  const stop = async (): Promise<void> => {
    if (exitInfo) return;
    child.kill('SIGTERM');
    const grace = new AbortController();
    const killed = sleep(options.stopTimeoutMs ?? 10_000, grace.signal).then((elapsed) => {
      if (elapsed && !exitInfo) child.kill('SIGKILL');
    });
    await exited;
    grace.abort();
    await killed;
  };

  const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
  const describe = `the embedded master (${runner.source}, data directory ${dataDir})`;
  for (;;) {
    if (exitInfo) {
      const how = exitInfo.signal ? `was killed by ${exitInfo.signal}` : `exited with code ${exitInfo.code}`;
      throw new RunnerError('master_start_failed', `${describe} ${how} before it served its API:\n${output()}`);
    }
    // A master.json left by an earlier master names another pid: only this child's counts.
    const endpoint = await localMaster(dataDir);
    if (endpoint && endpoint.pid === child.pid) {
      let credential: string | undefined;
      return {
        base: endpoint.base,
        pid: child.pid!,
        exited,
        output,
        stop,
        async authorization() {
          // Only the data directory's local token: not RUNNER_TOKEN or saved logins of the user's shell.
          credential ??= await credentialFor({ base: endpoint.base, local: true }, dataDir, {});
          return credential;
        },
      };
    }
    if (Date.now() > deadline) {
      await stop();
      throw new RunnerError(
        'master_start_failed',
        `${describe} did not write ${dataDir}/master.json within ${options.startTimeoutMs ?? 30_000} ms; it printed:\n${output()}`,
      );
    }
    await Promise.race([sleep(100), exited]);
  }
}
