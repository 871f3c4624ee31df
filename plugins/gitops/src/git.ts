import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { RunnerError } from '@runner/plugin-sdk';

/** Longest a git command may take (a fetch of a large repository over a slow link). */
const GIT_TIMEOUT_MS = 120_000;
/** Stderr kept in an error: git's last lines say what failed. */
const STDERR_KEPT = 2000;

/** The environment a git command runs with: credentials arrive only this way (GitAuth). */
export type GitEnv = Record<string, string>;

/** A commit as a flow version records it. */
export interface GitCommit {
  id: string;
  /** `Name <email>`. */
  author: string;
  /** The commit message's first line. */
  message: string;
}

/** A file of the tree at a commit: its path in the repository and its blob. */
export interface GitFile {
  path: string;
  blob: string;
}

/**
 * The system `git`, run without a shell and with a fixed environment (no user or system config,
 * no terminal prompts). `args` never hold a credential: those reach git through `env` (an SSH
 * command naming a key file, an askpass helper reading a file), so none shows in `ps` or a log.
 */
export function git(args: string[], env: GitEnv, input?: { cwd?: string }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      {
        cwd: input?.cwd,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          LANG: 'C',
          GIT_TERMINAL_PROMPT: '0',
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_CONFIG_GLOBAL: '/dev/null',
          ...env,
        },
        encoding: 'buffer',
        maxBuffer: 256 * 1024 * 1024,
        timeout: GIT_TIMEOUT_MS,
      },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const said = stderr.toString('utf8').trim().slice(-STDERR_KEPT);
        const code = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'git_missing' : 'git_failed';
        const reason =
          code === 'git_missing'
            ? 'the git command is not installed on this master'
            : `git ${args[0] === '-C' ? args[2] : args[0]} failed${error.killed ? ` (stopped after ${GIT_TIMEOUT_MS / 1000} s)` : ''}: ${said || error.message}`;
        reject(new RunnerError(code, reason, { status: 502, cause: error }));
      },
    );
  });
}

/**
 * A bare copy of the configured branch kept in the data directory: each look fetches the branch
 * into it and reads files from the fetched commit, never from a work tree.
 */
export class GitMirror {
  constructor(
    readonly dir: string,
    private readonly url: string,
    private readonly branch: string,
  ) {}

  private get ref(): string {
    return `refs/gitops/${this.branch}`;
  }

  /** Fetches the branch; resolves with its commit id. */
  async fetch(env: GitEnv): Promise<string> {
    if (!existsSync(join(this.dir, 'HEAD'))) {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      await git(['init', '--bare', '--quiet', this.dir], env);
    }
    await git(
      ['-C', this.dir, 'fetch', '--quiet', '--no-tags', '--force', this.url, `+refs/heads/${this.branch}:${this.ref}`],
      env,
    );
    return (await git(['-C', this.dir, 'rev-parse', '--verify', `${this.ref}^{commit}`], env)).toString().trim();
  }

  async commit(id: string): Promise<GitCommit> {
    const [sha = id, author = '', message = ''] = (
      await git(['-C', this.dir, 'show', '-s', '--format=%H%x00%an <%ae>%x00%s', id], {})
    )
      .toString('utf8')
      .trim()
      .split('\0');
    return { id: sha, author, message };
  }

  /** Every file under `path` (the repository root when empty) at the commit. */
  async files(id: string, path: string): Promise<GitFile[]> {
    const listing = await git(['-C', this.dir, 'ls-tree', '-r', '-z', id, ...(path ? ['--', path] : [])], {});
    return listing
      .toString('utf8')
      .split('\0')
      .filter(Boolean)
      .map((entry) => {
        const [meta = '', name = ''] = entry.split('\t');
        const [, type, blob = ''] = meta.split(' ');
        return { type, path: name, blob };
      })
      .filter((entry) => entry.type === 'blob')
      .map(({ path: name, blob }) => ({ path: name, blob }));
  }

  async read(blob: string): Promise<string> {
    return (await git(['-C', this.dir, 'cat-file', 'blob', blob], {})).toString('utf8');
  }
}
