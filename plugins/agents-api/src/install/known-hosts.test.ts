// known_hosts as OpenSSH writes and reads it: entries made by ssh-keygen are matched here, and
// entries recorded here are found by ssh-keygen -F.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  fingerprint,
  hostLabel,
  hostsFieldMatches,
  keyTypeOf,
  parseKnownHosts,
  preferredHostKeyAlgorithms,
  recordHostKey,
  verifyHostKey,
} from './known-hosts.js';

const dir = mkdtempSync(join(tmpdir(), 'runner-known-hosts-'));

/** A fresh key pair made by ssh-keygen: its public line and its blob. */
function hostKey(type: 'ed25519' | 'rsa' | 'ecdsa', name: string): { line: string; blob: Buffer; type: string } {
  const file = join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', type, ...(type === 'rsa' ? ['-b', '2048'] : []), '-N', '', '-f', file]);
  const line = readFileSync(`${file}.pub`, 'utf8').trim();
  const [keyType, base64] = line.split(' ');
  return { line: `${keyType} ${base64}`, blob: Buffer.from(base64, 'base64'), type: keyType };
}

const a = hostKey('ed25519', 'a');
const b = hostKey('ed25519', 'b');
const r = hostKey('rsa', 'r');

describe('host labels and key facts', () => {
  it('names a host as OpenSSH does', () => {
    expect(hostLabel('Server.Example', 22)).toBe('server.example');
    expect(hostLabel('127.0.0.1', 2222)).toBe('[127.0.0.1]:2222');
    expect(hostLabel('[::1]', 2222)).toBe('[::1]:2222');
  });

  it('reads the key type and prints the fingerprint ssh-keygen prints', () => {
    expect(keyTypeOf(a.blob)).toBe('ssh-ed25519');
    expect(keyTypeOf(r.blob)).toBe('ssh-rsa');
    const printed = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', join(dir, 'a.pub')], { encoding: 'utf8' });
    expect(printed).toContain(fingerprint(a.blob));
  });
});

describe('matching', () => {
  it('matches plain patterns with wildcards and negation', () => {
    expect(hostsFieldMatches('web1,web2', 'web2')).toBe(true);
    expect(hostsFieldMatches('*.example.com', 'db.example.com')).toBe(true);
    expect(hostsFieldMatches('*.example.com,!secret.example.com', 'secret.example.com')).toBe(false);
    expect(hostsFieldMatches('web?', 'web12')).toBe(false);
    expect(hostsFieldMatches('[127.0.0.1]:2222', '[127.0.0.1]:2222')).toBe(true);
    expect(hostsFieldMatches('127.0.0.1', '[127.0.0.1]:2222')).toBe(false);
  });

  it('matches entries hashed by ssh-keygen -H', () => {
    const file = join(dir, 'hashed');
    writeFileSync(file, `[10.1.2.3]:2200 ${a.line}\nplain.example ${r.line}\n`);
    execFileSync('ssh-keygen', ['-H', '-f', file], { stdio: 'ignore' });
    const entries = parseKnownHosts(readFileSync(file, 'utf8'), file);
    expect(entries.every((e) => e.hosts.startsWith('|1|'))).toBe(true);
    expect(verifyHostKey(entries, '[10.1.2.3]:2200', a.blob)).toMatchObject({ kind: 'known', entry: { line: 1 } });
    expect(verifyHostKey(entries, 'plain.example', r.blob)).toMatchObject({ kind: 'known', entry: { line: 2 } });
    expect(verifyHostKey(entries, '10.1.2.3', a.blob)).toEqual({ kind: 'unknown' });
  });

  it('tells a changed key from an unknown host, and refuses revoked keys', () => {
    const file = join(dir, 'mixed');
    const text = [
      '# comment',
      '',
      `known.example ${a.line}`,
      `@revoked * ${b.line}`,
      `@cert-authority *.example ${r.line}`,
      'garbage line',
    ].join('\n');
    const entries = parseKnownHosts(text, file);
    expect(entries).toHaveLength(3);
    expect(verifyHostKey(entries, 'known.example', a.blob).kind).toBe('known');
    const changed = verifyHostKey(entries, 'known.example', r.blob);
    expect(changed).toMatchObject({ kind: 'changed', entries: [{ file, line: 3, keyType: 'ssh-ed25519' }] });
    expect(verifyHostKey(entries, 'other.example', r.blob).kind).toBe('unknown');
    expect(verifyHostKey(entries, 'anything', b.blob)).toMatchObject({ kind: 'revoked', entry: { line: 4 } });
  });

  it('offers the algorithms of keys already known for the host first', () => {
    const entries = parseKnownHosts(`rsa.example ${r.line}\n`, 'f');
    expect(preferredHostKeyAlgorithms(entries, 'rsa.example').slice(0, 3)).toEqual([
      'rsa-sha2-512',
      'rsa-sha2-256',
      'ssh-rsa',
    ]);
    expect(preferredHostKeyAlgorithms(entries, 'other.example')[0]).toBe('ssh-ed25519');
  });
});

describe('recording', () => {
  it('appends a hashed entry that ssh-keygen -F finds, creating the file 0600', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'runner-kh-')), '.ssh', 'known_hosts');
    await recordHostKey(file, '[127.0.0.1]:2222', a.blob);
    await recordHostKey(file, 'other.example', r.blob);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain('127.0.0.1');
    expect(text.trim().split('\n')).toHaveLength(2);
    const found = execFileSync('ssh-keygen', ['-F', '[127.0.0.1]:2222', '-f', file], { encoding: 'utf8' });
    expect(found).toContain(a.line.split(' ')[1]);
    expect(execFileSync('stat', ['-c', '%a', file], { encoding: 'utf8' }).trim()).toBe('600');
    expect(verifyHostKey(parseKnownHosts(text, file), 'other.example', r.blob).kind).toBe('known');
  });

  it('starts a new line when the file does not end with one', async () => {
    const file = join(dir, 'no-newline');
    writeFileSync(file, `known.example ${a.line}`);
    await recordHostKey(file, 'new.example', b.blob);
    const entries = parseKnownHosts(readFileSync(file, 'utf8'), file);
    expect(entries.map((e) => e.line)).toEqual([1, 2]);
    expect(verifyHostKey(entries, 'new.example', b.blob).kind).toBe('known');
  });
});
