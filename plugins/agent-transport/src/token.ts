import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  unwatchFile,
  watchFile,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { ConflictError, InvalidInputError, type RunnerConfig } from '@runner/plugin-sdk';

/** Where `runner agent token create` keeps the join token: `<data-dir>/agent-token`, mode 0600. */
export function tokenFile(dataDir: string): string {
  return join(dataDir, 'agent-token');
}

/** 32 random bytes, URL-safe; the prefix makes a leaked token easy to recognise and grep for. */
export function generateToken(): string {
  return `rjt_${randomBytes(32).toString('base64url')}`;
}

/**
 * Writes a new token to the data directory (temp file and rename, so a master reading it never
 * sees half a token). Refuses to replace one without `force`: agents holding the old token could
 * not reconnect.
 */
export function createTokenFile(dataDir: string, options: { force?: boolean } = {}): { path: string; token: string } {
  const path = tokenFile(dataDir);
  if (existsSync(path) && !options.force) {
    throw new ConflictError(
      `a join token already exists in ${path}; agents use it to connect. Replace it with --force (agents with the old token cannot reconnect), or print it with \`runner agent token show\``,
    );
  }
  mkdirSync(dirname(path), { recursive: true });
  const token = generateToken();
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, `${token}\n`, { mode: 0o600 });
  renameSync(temp, path);
  return { path, token };
}

export type TokenCheck = 'ok' | 'missing' | 'wrong';

/**
 * The token agents must present: config `agent.join_token` (RUNNER_JOIN_TOKEN) when set, else
 * the data directory's token file, re-read when it changes so `runner agent token create --force`
 * takes effect for the next registration without a master restart.
 */
export class JoinTokens {
  private cached?: { mtimeMs: number; digest?: Buffer };
  private onRead?: (token: string, rotated: boolean) => void;

  constructor(
    private readonly configured: string | undefined,
    private readonly file: string,
  ) {}

  static fromConfig(config: RunnerConfig): JoinTokens {
    const configured = config.get('agent.join_token', '').trim();
    return new JoinTokens(configured || undefined, tokenFile(config.dataDir));
  }

  /** Where the expected token comes from, for log lines and errors. */
  source(): string {
    return this.configured !== undefined ? 'config agent.join_token' : this.file;
  }

  /** Creates the token file when no token is configured and none exists; returns its path then. */
  ensure(): string | undefined {
    if (this.configured !== undefined || existsSync(this.file)) return undefined;
    createTokenFile(dirname(this.file));
    return this.file;
  }

  /**
   * Calls `onRead` with the token now and whenever the file holds another one (`rotated` then):
   * the redactor learns each, the audit log hears of rotations. The file is polled every second,
   * so a rotation is noticed without waiting for an agent to connect. Returns the stop function.
   */
  follow(onRead: (token: string, rotated: boolean) => void): () => void {
    this.onRead = onRead;
    if (this.configured !== undefined) {
      onRead(this.configured, false);
      return () => undefined;
    }
    this.expectedDigest();
    const poll = () => void this.expectedDigest();
    watchFile(this.file, { interval: 1000, persistent: false }, poll);
    return () => unwatchFile(this.file, poll);
  }

  check(presented: string | undefined): TokenCheck {
    if (!presented) return 'missing';
    const expected = this.expectedDigest();
    if (!expected) return 'wrong';
    // Digests have one length, so the comparison's time says nothing about the token.
    return timingSafeEqual(digest(presented), expected) ? 'ok' : 'wrong';
  }

  private expectedDigest(): Buffer | undefined {
    if (this.configured !== undefined) return (this.cached ??= { mtimeMs: 0, digest: digest(this.configured) }).digest;
    let mtimeMs: number;
    try {
      mtimeMs = statSync(this.file).mtimeMs;
    } catch {
      return undefined;
    }
    if (this.cached?.mtimeMs !== mtimeMs) {
      const token = readFileSync(this.file, 'utf8').trim();
      const previous = this.cached?.digest;
      this.cached = { mtimeMs, digest: token ? digest(token) : undefined };
      const rotated =
        previous !== undefined && this.cached.digest !== undefined && !previous.equals(this.cached.digest);
      if (token) this.onRead?.(token, rotated);
    }
    return this.cached.digest;
  }
}

/** The token the data directory or config holds, for `runner agent token show`. */
export function currentToken(config: RunnerConfig): { token: string; source: string } | undefined {
  const configured = config.get('agent.join_token', '').trim();
  if (configured)
    return { token: configured, source: `config agent.join_token (from ${config.sourceOf('agent.join_token')})` };
  const path = tokenFile(config.dataDir);
  if (!existsSync(path)) return undefined;
  const token = readFileSync(path, 'utf8').trim();
  if (!token)
    throw new InvalidInputError(
      `the join token file ${path} is empty; create a token with \`runner agent token create --force\``,
    );
  return { token, source: path };
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}
