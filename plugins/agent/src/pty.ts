import { spawn } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { RunnerError } from '@runner/plugin-sdk';

/**
 * The pseudo-terminal helper: Python's `pty` module, which every Linux host with python3 has, so
 * the agent needs no native addon (node-pty would have to be built per Node ABI and platform, and
 * the agent ships as plain JavaScript). It forks the user's login shell on a PTY, relays stdin and
 * stdout, and applies `rows cols` lines read from fd 3 as TIOCSWINSZ (the shell gets SIGWINCH).
 */
const HELPER = String.raw`
import os, pty, pwd, select, signal, struct, sys, fcntl, termios
rows, cols = int(sys.argv[1]), int(sys.argv[2])
shell = pwd.getpwuid(os.getuid()).pw_shell or '/bin/sh'
if not os.path.exists(shell) or shell.endswith('nologin') or shell.endswith('false'):
    shell = '/bin/sh'
pid, fd = pty.fork()
if pid == 0:
    os.chdir(os.path.expanduser('~'))
    os.execv(shell, ['-' + os.path.basename(shell)])
def size(r, c):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', r, c, 0, 0))
size(rows, cols)
def write_all(target, data):
    while data:
        data = data[os.write(target, data):]
watched = [0, fd, 3]
pending = b''
while fd in watched:
    ready = select.select(watched, [], [])[0]
    if fd in ready:
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b''
        if not data:
            break
        write_all(1, data)
    # A resize before the keys: the agent writes them to the two pipes in the order they came,
    # and a key typed after a resize (stty size) must find the new size.
    if 3 in ready:
        data = os.read(3, 1024)
        if not data:
            watched.remove(3)
        pending += data
        while b'\n' in pending:
            line, pending = pending.split(b'\n', 1)
            r, c = line.split()
            size(int(r), int(c))
    if 0 in ready:
        data = os.read(0, 65536)
        if data:
            write_all(fd, data)
        else:
            watched.remove(0)
            os.kill(pid, signal.SIGHUP)
_, status = os.waitpid(pid, 0)
sys.exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 255)
`;

export interface Pty {
  write(data: Buffer): void;
  resize(rows: number, cols: number): void;
  /** Resolves with the shell's exit code (255 when a signal ended it). */
  readonly exited: Promise<number>;
  close(): void;
}

const clamp = (n: number, max: number) => Math.max(1, Math.min(max, Math.floor(n) || 1));

/** Opens the user's login shell on a PTY of `rows` x `cols`; `output` hears what it prints. */
export function openPty(options: { rows: number; cols: number; term?: string }, output: (data: Buffer) => void): Pty {
  const child = spawn('python3', ['-c', HELPER, String(clamp(options.rows, 500)), String(clamp(options.cols, 1000))], {
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    env: { ...process.env, TERM: options.term || 'xterm-256color' },
  });
  const control = child.stdio[3] as NodeJS.WritableStream;
  let stderr = '';
  child.stdout.on('data', output);
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  child.stdin.on('error', () => {});
  control.on('error', () => {});
  const exited = new Promise<number>((resolve, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new RunnerError(
          'terminal_unavailable',
          error.code === 'ENOENT'
            ? 'a terminal needs python3 on the agent host (its pty module): install python3'
            : `cannot start the terminal: ${error.message}`,
        ),
      ),
    );
    child.once('close', (code) => {
      if (code === 1 && stderr.includes('Traceback')) output(Buffer.from(`\r\nterminal helper failed: ${stderr}\r\n`));
      resolve(code ?? 255);
    });
  });
  return {
    write: (data) => void child.stdin.write(data),
    resize: (rows, cols) => void control.write(`${clamp(rows, 500)} ${clamp(cols, 1000)}\n`),
    exited,
    close: () => {
      child.stdin.end();
      // A shell that ignores SIGHUP still goes.
      setTimeout(() => child.exitCode === null && child.kill('SIGKILL'), 2000).unref();
    },
  };
}

/** Writes a file for the terminal's upload (0600 unless `mode`). */
export async function putFile(path: string, data: Buffer, mode: number): Promise<number> {
  await writeFile(path, data, { mode: mode || 0o600 });
  return data.length;
}

/** Reads a file for the terminal's download, refusing one larger than `maxBytes`. */
export async function getFile(path: string, maxBytes: number): Promise<Buffer> {
  const info = await stat(path);
  if (!info.isFile()) throw new RunnerError('invalid_input', `${path} is not a regular file`);
  if (info.size > maxBytes)
    throw new RunnerError('too_large', `${path} is ${info.size} bytes; at most ${maxBytes} are downloaded`, {
      status: 413,
    });
  return readFile(path);
}
