import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { InvalidInputError, readOptional, RunnerError, writePrivateFile } from '@runner/plugin-sdk';
import { KEY_BYTES, makeKey, newKey, type SecretKey } from './sealing.js';

/**
 * Where the key comes from: an environment variable the operator names (`secrets.key_env`), else
 * a file (`secrets.key_file`, default `<data-dir>/secrets/master.key`, 0600 in a 0700 directory
 * of the master's 0700 data directory: workflow code runs as another user and cannot read it).
 * The key is never in the store, so a backup or `db copy` holds ciphertext only.
 */
export interface KeySettings {
  file: string;
  env?: string;
}

export const defaultKeyFile = (dataDir: string) => join(dataDir, 'secrets', 'master.key');

/** Says where the key is, for messages (never the key). */
export const describeSource = (settings: KeySettings) =>
  settings.env ? `environment variable ${settings.env} (secrets.key_env)` : `key file ${settings.file}`;

/** The key as its file holds it: base64 of 32 bytes, one line. */
function parseKey(text: string, where: string): SecretKey {
  const bytes = Buffer.from(text.trim(), 'base64');
  if (bytes.length !== KEY_BYTES)
    throw new InvalidInputError(
      `${where}: a secrets key is ${KEY_BYTES} bytes in base64 (44 characters); found ${bytes.length} bytes`,
    );
  return makeKey(bytes);
}

/**
 * The current key, read once and kept; a key being rotated in (`<file>.next`, written before the
 * re-encryption commits and renamed over the file after) is offered too, so a master stopped
 * between the two still opens every value.
 */
export class KeySource {
  private current: SecretKey | undefined;
  private pending: SecretKey | undefined;
  private loaded = false;

  constructor(
    readonly settings: KeySettings,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  private get nextFile() {
    return `${this.settings.file}.next`;
  }

  async load(): Promise<void> {
    if (this.settings.env) {
      const text = this.env[this.settings.env];
      this.current = text ? parseKey(text, `environment variable ${this.settings.env}`) : undefined;
    } else {
      const text = await readOptional(this.settings.file);
      this.current = text === undefined ? undefined : parseKey(text, this.settings.file);
      const next = await readOptional(this.nextFile);
      this.pending = next === undefined ? undefined : parseKey(next, this.nextFile);
    }
    this.loaded = true;
  }

  /** The keys that may open a value, by id. */
  keys(): SecretKey[] {
    return [this.current, this.pending].filter((key): key is SecretKey => key !== undefined);
  }

  /** The key new values are sealed with; made (and written 0600) on first use of the default file. */
  async sealingKey(): Promise<SecretKey> {
    if (!this.loaded) await this.load();
    if (this.current) return this.current;
    if (this.settings.env)
      throw new RunnerError('secrets_key_missing', `no secrets key: ${describeSource(this.settings)} is not set`, {
        status: 503,
      });
    const key = newKey();
    await writePrivateFile(this.settings.file, `${key.bytes.toString('base64')}\n`);
    this.current = key;
    return key;
  }

  /** Rotation, step 1: a new key written beside the current one (nothing sealed with it yet). */
  async prepareRotation(): Promise<SecretKey> {
    if (this.settings.env)
      throw new InvalidInputError(
        `the secrets key comes from environment variable ${this.settings.env}: it cannot be rotated by runner; ` +
          'use secrets.key_file (a file runner may write) to rotate it',
      );
    const key = newKey();
    await writePrivateFile(this.nextFile, `${key.bytes.toString('base64')}\n`);
    this.pending = key;
    return key;
  }

  /** Rotation, step 2, once every value is sealed under the new key: it becomes the key. */
  async commitRotation(): Promise<void> {
    if (!this.pending) return;
    await rename(this.nextFile, this.settings.file);
    this.current = this.pending;
    this.pending = undefined;
  }

  /** Rotation failed: the new key is forgotten; values stay sealed under the current one. */
  async abandonRotation(): Promise<void> {
    this.pending = undefined;
    await rm(this.nextFile, { force: true });
  }

  /** At start: finishes or forgets a rotation a stop interrupted, by which key the stored values name. */
  async settleRotation(storedKeyIds: ReadonlySet<string>): Promise<'finished' | 'abandoned' | undefined> {
    if (!this.pending) return undefined;
    if (storedKeyIds.has(this.pending.id)) {
      await this.commitRotation();
      return 'finished';
    }
    await this.abandonRotation();
    return 'abandoned';
  }
}
