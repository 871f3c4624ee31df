import { spawn, type ChildProcess } from 'node:child_process';

/** What to start. `env` and `cwd` are always explicit, so both launchers start the same thing. */
export interface LaunchSpec {
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdin?: string;
  /** Bytes per stream worth delivering; one more is delivered so the receiver can tell it was cut. */
  cap: number;
}

/** Events of one launched process, in the order they happen (`close` last, exactly once). */
export interface LaunchEvents {
  pid(pid: number): void;
  data(fd: 1 | 2, chunk: Buffer): void;
  /** The program could not be started (ENOENT, EACCES...). */
  error(code: string | undefined, message: string): void;
  exit(code: number | null, signal: NodeJS.Signals | null): void;
  close(): void;
}

export interface Launched {
  /** Stop waiting for the pipes: a descendant that left the process group may hold them open. */
  release(): void;
}

export interface Launcher {
  launch(spec: LaunchSpec, events: LaunchEvents): Launched;
  close(): void;
}

/** Starts processes from this process. */
export class DirectLauncher implements Launcher {
  launch(spec: LaunchSpec, events: LaunchEvents): Launched {
    const child = startChild(spawn, spec, events);
    return {
      release: () => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      },
    };
  }

  close(): void {}
}

/**
 * Starts one process and reports its events. Plain JavaScript in a string because both launchers
 * run exactly this code and the helper receives it as source text: a compiled function's
 * `toString()` could name things a bundler, a test transform or coverage renamed.
 * The process gets a group and session of its own (`detached`), so a timeout can kill all it
 * started, and it has no terminal to prompt on. Past `cap` (+1 byte, so the receiver can tell) a
 * stream is still drained, so the program never blocks on a full pipe, but nothing is delivered.
 */
const START_CHILD_SOURCE = `function startChild(spawn, spec, events) {
  const hasStdin = spec.stdin !== undefined && spec.stdin !== null;
  const child = spawn(spec.file, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    stdio: [hasStdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    detached: true,
  });
  if (child.pid !== undefined) events.pid(child.pid);
  const forward = (fd) => {
    let delivered = 0;
    return (chunk) => {
      if (delivered > spec.cap) return;
      const room = spec.cap + 1 - delivered;
      const piece = chunk.length > room ? chunk.subarray(0, room) : chunk;
      delivered += piece.length;
      events.data(fd, piece);
    };
  };
  child.stdout.on('data', forward(1));
  child.stderr.on('data', forward(2));
  if (hasStdin) {
    child.stdin.on('error', () => {}); // EPIPE: the program did not read its input; not a failure
    child.stdin.end(spec.stdin);
  }
  child.on('error', (error) => events.error(error.code, error.message));
  child.on('exit', (code, signal) => events.exit(code, signal));
  child.on('close', () => events.close());
  return child;
}`;

type StartChild = (spawnFn: typeof spawn, spec: LaunchSpec, events: LaunchEvents) => ChildProcess;
const startChild = new Function(`return ${START_CHILD_SOURCE}`)() as StartChild;

/**
 * The helper's program. fork() copies the page tables of the process that calls it, so spawning
 * from a runner holding a few hundred MB (the store, the UI, Lua states) costs 10-40 ms a
 * process, against about 2 ms from a fresh Node process: the helper stays small and spawns for us.
 */
const HELPER_SOURCE = `
const { spawn } = require('node:child_process');
${START_CHILD_SOURCE}
const running = new Map();
const send = (message) => { if (process.connected) process.send(message); };
process.on('message', (m) => {
  if (m.op === 'run') {
    const id = m.id;
    // 'close' nearly always follows 'exit' at once: held back a turn, the exit goes in the close's
    // message ('end'), one IPC message fewer a command. Alone when the pipes stay open longer.
    let exited = null;
    const sendExit = () => {
      if (exited === null) return;
      send({ id, ev: 'exit', code: exited.code, signal: exited.signal });
      exited = null;
    };
    try {
      const child = startChild(spawn, m.spec, {
        pid: (pid) => send({ id, ev: 'pid', pid }),
        data: (fd, data) => send({ id, ev: 'data', fd, data }),
        error: (code, message) => send({ id, ev: 'error', code, message }),
        exit: (code, signal) => { exited = { code, signal }; setImmediate(sendExit); },
        close: () => {
          running.delete(id);
          if (exited === null) return send({ id, ev: 'close' });
          send({ id, ev: 'end', code: exited.code, signal: exited.signal });
          exited = null;
        },
      });
      running.set(id, child);
    } catch (error) {
      send({ id, ev: 'error', code: error.code, message: error.message });
      send({ id, ev: 'close' });
    }
  } else if (m.op === 'release') {
    const child = running.get(m.id);
    if (child) { child.stdout.destroy(); child.stderr.destroy(); }
  }
});
process.on('disconnect', () => process.exit(0));
send({ ev: 'ready' });
`;

type HelperMessage =
  | { ev: 'ready' }
  | { id: number; ev: 'pid'; pid: number }
  | { id: number; ev: 'data'; fd: 1 | 2; data: Buffer }
  | { id: number; ev: 'error'; code?: string; message: string }
  | { id: number; ev: 'exit'; code: number | null; signal: NodeJS.Signals | null }
  | { id: number; ev: 'close' }
  /** exit and close at once. */
  | { id: number; ev: 'end'; code: number | null; signal: NodeJS.Signals | null };

/** How long the helper may take to start before exec.run falls back to spawning directly. */
const HELPER_START_TIMEOUT_MS = 10_000;

/**
 * Starts processes through a small long-lived Node process (see HELPER_SOURCE). Started at the
 * launch after the first `directLaunches` (default 1); until it is ready (40-180 ms), and if it
 * cannot start or dies, launches start from this process (until the next attempt, after a failure).
 * The first launch never starts it: a `runner run` of one command would pay a whole Node start
 * (~40 ms of CPU, and a core it competes for) to save the ~2 ms a spawn costs from a small process.
 */
export class HelperLauncher implements Launcher {
  private helper: ChildProcess | undefined;
  private ready = false;
  private readyWaiters: ((ready: boolean) => void)[] = [];
  private readonly pending = new Map<number, LaunchEvents>();
  private nextId = 1;
  private readonly direct = new DirectLauncher();
  private failedAt = -Infinity;
  private closed = false;
  private directLeft: number;

  constructor(
    private readonly onProblem: (message: string) => void = () => {},
    options: { directLaunches?: number } = {},
  ) {
    this.directLeft = options.directLaunches ?? 1;
  }

  launch(spec: LaunchSpec, events: LaunchEvents): Launched {
    // After a failure, retry the helper at most once a minute; meanwhile spawn directly.
    if (this.closed || performance.now() - this.failedAt < 60_000) return this.direct.launch(spec, events);
    if (this.directLeft > 0) {
      this.directLeft -= 1;
      return this.direct.launch(spec, events);
    }
    const helper = this.helper ?? this.start();
    // No command waits for the helper's start: queued, the first exec.run of a `runner run` took
    // that whole start longer; started from here, it costs what a start from a still small process
    // costs (about 2 ms), and the helper takes over once ready. A boot that runs no command never
    // pays for the helper (a helper started at setup measured the same wall time, plus 90 ms CPU).
    if (!this.ready) return this.direct.launch(spec, events);
    const id = this.nextId++;
    this.pending.set(id, events);
    if (this.pending.size === 1) helper.channel?.ref();
    helper.send({ op: 'run', id, spec });
    return {
      release: () => {
        if (this.pending.has(id) && this.helper?.connected) this.helper.send({ op: 'release', id });
      },
    };
  }

  /** Resolves with true once the helper takes launches, false if it failed to start or is not started. */
  whenReady(): Promise<boolean> {
    if (this.ready) return Promise.resolve(true);
    if (this.helper === undefined) return Promise.resolve(false);
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  close(): void {
    this.closed = true;
    this.helper?.kill();
    this.helper = undefined;
    this.ready = false;
    this.settleReady(false);
  }

  /** The helper's pid while it runs (for diagnostics and tests). */
  get helperPid(): number | undefined {
    return this.helper?.pid;
  }

  private start(): ChildProcess {
    const helper = spawn(process.execPath, ['-e', HELPER_SOURCE], {
      // ELECTRON_RUN_AS_NODE: in the desktop app process.execPath is Electron, which must act as Node.
      env: { PATH: process.env.PATH ?? '', ELECTRON_RUN_AS_NODE: '1' },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    this.helper = helper;
    this.ready = false;
    // Idle, the helper must not keep the runner alive; while processes run, it must.
    helper.unref();
    helper.channel?.unref();
    const startTimer = setTimeout(() => {
      if (!this.ready) this.fail(helper, `the process helper did not start within ${HELPER_START_TIMEOUT_MS / 1000}s`);
    }, HELPER_START_TIMEOUT_MS);
    startTimer.unref();
    const closed = (id: number, events: LaunchEvents): void => {
      this.pending.delete(id);
      if (this.pending.size === 0) helper.channel?.unref();
      events.close();
    };
    helper.on('message', (m: HelperMessage) => {
      if (m.ev === 'ready') {
        this.ready = true;
        clearTimeout(startTimer);
        this.settleReady(true);
        return;
      }
      const events = this.pending.get(m.id);
      if (!events) return;
      switch (m.ev) {
        case 'pid':
          return events.pid(m.pid);
        case 'data':
          return events.data(m.fd, Buffer.isBuffer(m.data) ? m.data : Buffer.from(m.data));
        case 'error':
          return events.error(m.code, m.message);
        case 'exit':
          return events.exit(m.code, m.signal);
        case 'end':
          events.exit(m.code, m.signal);
          return closed(m.id, events);
        case 'close':
          return closed(m.id, events);
      }
    });
    helper.on('error', (error) => this.fail(helper, `the process helper failed: ${error.message}`));
    helper.on('exit', (code, signal) => {
      if (!this.closed) this.fail(helper, `the process helper exited (${signal ?? `code ${code}`})`);
    });
    return helper;
  }

  private settleReady(ready: boolean): void {
    const waiters = this.readyWaiters;
    this.readyWaiters = [];
    for (const resolve of waiters) resolve(ready);
  }

  /** Later launches start from this process for a while; runs already in the helper are lost. */
  private fail(helper: ChildProcess, message: string): void {
    if (this.helper !== helper) return;
    this.helper = undefined;
    this.ready = false;
    this.failedAt = performance.now();
    this.onProblem(message);
    helper.kill();
    this.settleReady(false);
    for (const [id, events] of this.pending) {
      this.pending.delete(id);
      events.error('EHELPER', `${message} while the command ran; its outcome is unknown`);
      events.close();
    }
  }
}
