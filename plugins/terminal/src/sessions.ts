import { randomBytes } from 'node:crypto';
import {
  InvalidInputError,
  NotFoundError,
  RunnerError,
  type AgentTerminals,
  type EventBus,
  type Logger,
  type Principal,
  type Redactor,
  type SshProfiles,
  type WebSocketChannel,
} from '@runner/plugin-sdk';

/** What a terminal reaches: an agent's host, or a host through an SSH profile. */
export interface Backend {
  write(data: Buffer): void;
  resize(rows: number, cols: number): void;
  close(): void;
  exited: Promise<number | null>;
  upload(path: string, data: Buffer): Promise<number>;
  download(path: string, maxBytes: number): Promise<Buffer>;
}

export interface TerminalView {
  id: string;
  target: string;
  user: string;
  rows: number;
  cols: number;
  status: 'open' | 'closed';
  exit_code?: number | null;
  created_at: string;
  /** Browsers (or CLIs) attached now. */
  attached: number;
}

/** Output kept for a reattach (a page reload): the screen and some history, not the whole session. */
const SCROLLBACK_BYTES = 256 * 1024;
/** A session with nobody attached is closed after this long (a reload reattaches well before). */
export const DETACHED_TTL_MS = 10 * 60_000;
/** Largest file moved by the terminal's upload and download. */
export const MAX_FILE_BYTES = 8 * 1024 * 1024;

interface Session {
  id: string;
  target: string;
  owner: { id: string; name: string };
  rows: number;
  cols: number;
  createdAt: string;
  status: 'open' | 'closed';
  exitCode?: number | null;
  scrollback: Buffer[];
  scrollbackBytes: number;
  sockets: Set<WebSocketChannel>;
  backend: Backend;
  forget: () => void;
  idle?: NodeJS.Timeout;
}

export interface TerminalSessionsOptions {
  agents?: AgentTerminals;
  ssh?: SshProfiles;
  events: EventBus;
  logger: Logger;
  redactor: Redactor;
  /** Ends the session when its user's credential is revoked (HttpRouter.trackPrincipal). */
  track?: (principal: Principal, end: (reason: string) => void) => () => void;
  detachedTtlMs?: number;
}

const clampSize = (n: unknown, fallback: number, max: number) =>
  typeof n === 'number' && Number.isInteger(n) && n > 0 ? Math.min(n, max) : fallback;

/**
 * The open terminals of this master. A session outlives its socket (a reload reattaches and gets
 * the scrollback) but not its owner's credential, nor DETACHED_TTL_MS with nobody attached. Only
 * its owner may attach to it, upload or download through it.
 */
export class TerminalSessions {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly options: TerminalSessionsOptions) {}

  list(principal: Principal | undefined): TerminalView[] {
    return [...this.sessions.values()].filter((s) => !principal || s.owner.id === principal.id).map(view);
  }

  /** The session, if `principal` owns it. */
  require(id: string, principal: Principal | undefined): Session {
    const session = this.sessions.get(id);
    if (!session || (principal && session.owner.id !== principal.id))
      throw new NotFoundError(`no terminal session ${id}`);
    return session;
  }

  get(id: string, principal: Principal | undefined): TerminalView {
    return view(this.require(id, principal));
  }

  async open(
    principal: Principal | undefined,
    target: string,
    size: { rows?: number; cols?: number },
  ): Promise<TerminalView> {
    const rows = clampSize(size.rows, 24, 500);
    const cols = clampSize(size.cols, 80, 1000);
    const owner = principal ? { id: principal.id, name: principal.name } : { id: 'local', name: 'local' };
    const id = randomBytes(12).toString('hex');
    // What the shell prints before the session is recorded is kept for it, then it goes live.
    const early: { output: Buffer[]; session?: Session } = { output: [] };
    const onOutput = (data: Buffer) => (early.session ? this.output(early.session, data) : early.output.push(data));
    const backend = await this.backend(target, rows, cols, owner.name, onOutput);
    const opened: Session = {
      id,
      target,
      owner,
      rows,
      cols,
      createdAt: new Date().toISOString(),
      status: 'open',
      scrollback: [],
      scrollbackBytes: 0,
      sockets: new Set(),
      backend,
      forget: () => {},
    };
    this.sessions.set(id, opened);
    for (const data of early.output) this.output(opened, data);
    early.session = opened;
    if (principal && this.options.track)
      opened.forget = this.options.track(principal, (reason) => this.close(opened, `credential revoked: ${reason}`));
    this.detached(opened);
    this.options.events.emit('terminal.opened', { id, target, user: owner.name });
    backend.exited.then(
      (code) => this.ended(opened, code, 'the shell ended'),
      (error: Error) => this.ended(opened, null, error.message),
    );
    return view(opened);
  }

  private async backend(
    target: string,
    rows: number,
    cols: number,
    user: string,
    output: (data: Buffer) => void,
  ): Promise<Backend> {
    if (target.startsWith('ssh:')) {
      if (!this.options.ssh)
        throw new RunnerError('unavailable', 'SSH profiles are not loaded on this master', { status: 503 });
      const connection = await this.options.ssh.connect(target.slice(4), { actor: `terminal:${user}` });
      try {
        const shell = await connection.shell({ rows, cols });
        shell.onData(output);
        const exited = new Promise<number | null>((resolve) => shell.onExit(resolve));
        void exited.then(() => connection.close());
        return {
          write: (data) => shell.write(data),
          resize: (r, c) => shell.resize(r, c),
          close: () => {
            shell.close();
            connection.close();
          },
          exited,
          upload: async (path, data) => (await connection.uploadBytes(data, path)).bytes,
          download: (path, maxBytes) => connection.downloadBytes(path, maxBytes),
        };
      } catch (error) {
        connection.close();
        throw error;
      }
    }
    const agent = target.startsWith('agent:') ? target.slice(6) : target;
    if (!agent)
      throw new InvalidInputError('target: name an agent, agent:<name> or ssh:<profile>', { field: 'target' });
    const { agents } = this.options;
    if (!agents) throw new RunnerError('unavailable', 'this master serves no agents', { status: 503 });
    const terminal = await agents.open(agent, { rows, cols }, output);
    return {
      write: (data) => terminal.write(data),
      resize: (r, c) => terminal.resize(r, c),
      close: () => terminal.close(),
      exited: terminal.exited,
      upload: (path, data) => agents.putFile(agent, path, data),
      download: (path, maxBytes) => agents.getFile(agent, path, maxBytes),
    };
  }

  private output(session: Session, raw: Buffer): void {
    // Secrets registered with the redactor (run secrets, credentials) are masked here too.
    const data = this.options.redactor.hasSecrets()
      ? Buffer.from(this.options.redactor.redactText(raw.toString('utf8')))
      : raw;
    session.scrollback.push(data);
    session.scrollbackBytes += data.length;
    while (session.scrollbackBytes > SCROLLBACK_BYTES && session.scrollback.length > 1)
      session.scrollbackBytes -= (session.scrollback.shift() as Buffer).length;
    for (const socket of session.sockets) socket.send(data);
  }

  /** Attaches a socket: the scrollback first, then everything live; binary frames in are keystrokes. */
  attach(id: string, principal: Principal | undefined, socket: WebSocketChannel): void {
    const session = this.require(id, principal);
    if (session.status === 'closed') {
      socket.send(JSON.stringify({ type: 'exit', code: session.exitCode ?? null }));
      socket.close(1000, 'the session ended');
      return;
    }
    clearTimeout(session.idle);
    session.sockets.add(socket);
    socket.send(JSON.stringify({ type: 'attached', session: view(session) }));
    if (session.scrollback.length > 0) socket.send(Buffer.concat(session.scrollback));
    socket.onMessage((data, binary) => {
      if (session.status === 'closed') return;
      if (binary) return session.backend.write(data);
      this.control(session, data.toString('utf8'));
    });
    socket.onClose(() => {
      session.sockets.delete(socket);
      if (session.sockets.size === 0) this.detached(session);
    });
  }

  /** Text frames: `{"type":"resize","rows":40,"cols":120}` or `{"type":"input","data":"ls\r"}`. */
  private control(session: Session, text: string): void {
    let message: { type?: string; rows?: number; cols?: number; data?: string };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      return;
    }
    if (message.type === 'resize') {
      session.rows = clampSize(message.rows, session.rows, 500);
      session.cols = clampSize(message.cols, session.cols, 1000);
      session.backend.resize(session.rows, session.cols);
    } else if (message.type === 'input' && typeof message.data === 'string') {
      session.backend.write(Buffer.from(message.data));
    }
  }

  private detached(session: Session): void {
    clearTimeout(session.idle);
    session.idle = setTimeout(
      () => this.close(session, 'nobody attached'),
      this.options.detachedTtlMs ?? DETACHED_TTL_MS,
    );
    session.idle.unref();
  }

  async upload(id: string, principal: Principal | undefined, path: string, data: Buffer): Promise<number> {
    const session = this.require(id, principal);
    if (data.length > MAX_FILE_BYTES)
      throw new RunnerError('too_large', `at most ${MAX_FILE_BYTES} bytes are uploaded through a terminal`, {
        status: 413,
      });
    const bytes = await session.backend.upload(checkPath(path), data);
    this.options.logger.info(
      `terminal ${id}: ${session.owner.name} uploaded ${bytes} bytes to ${path} on ${session.target}`,
    );
    return bytes;
  }

  async download(id: string, principal: Principal | undefined, path: string): Promise<Buffer> {
    const session = this.require(id, principal);
    const data = await session.backend.download(checkPath(path), MAX_FILE_BYTES);
    this.options.logger.info(
      `terminal ${id}: ${session.owner.name} downloaded ${path} (${data.length} bytes) from ${session.target}`,
    );
    return data;
  }

  closeById(id: string, principal: Principal | undefined): void {
    this.close(this.require(id, principal), `closed by ${principal?.name ?? 'local'}`);
  }

  private close(session: Session, reason: string): void {
    if (session.status === 'closed') {
      this.sessions.delete(session.id);
      return;
    }
    session.backend.close();
    this.ended(session, null, reason);
  }

  private ended(session: Session, code: number | null, reason: string): void {
    if (session.status === 'closed') return;
    session.status = 'closed';
    session.exitCode = code;
    clearTimeout(session.idle);
    session.forget();
    this.sessions.delete(session.id);
    for (const socket of session.sockets) {
      socket.send(JSON.stringify({ type: 'exit', code, reason }));
      socket.close(1000, 'the session ended');
    }
    this.options.events.emit('terminal.closed', {
      id: session.id,
      target: session.target,
      user: session.owner.name,
      reason,
    });
  }

  closeAll(reason: string): void {
    for (const session of [...this.sessions.values()]) this.close(session, reason);
  }
}

function checkPath(path: string): string {
  if (typeof path !== 'string' || !path.startsWith('/') || path.includes('\0'))
    throw new InvalidInputError('path: give an absolute path on the remote host', { field: 'path' });
  return path;
}

function view(session: Session): TerminalView {
  return {
    id: session.id,
    target: session.target,
    user: session.owner.name,
    rows: session.rows,
    cols: session.cols,
    status: session.status,
    ...(session.status === 'closed' ? { exit_code: session.exitCode ?? null } : {}),
    created_at: session.createdAt,
    attached: session.sockets.size,
  };
}
