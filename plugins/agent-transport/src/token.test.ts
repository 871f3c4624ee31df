import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { staticConfig } from '@runner/plugin-sdk/testing';
import { plugin } from './plugin.js';
import { describe, expect, it } from 'vitest';
import { createTokenFile, currentToken, generateToken, JoinTokens, tokenFile } from './token.js';

const tempDir = () => mkdtempSync(join(tmpdir(), 'runner-token-'));

describe('join tokens', () => {
  it('generates long random tokens with a recognisable prefix', () => {
    const a = generateToken();
    expect(a).toMatch(/^rjt_[A-Za-z0-9_-]{43}$/);
    expect(generateToken()).not.toBe(a);
  });

  it('creates the token file with mode 0600 and refuses to replace it without force', () => {
    const dir = tempDir();
    const { path, token } = createTokenFile(dir);
    expect(path).toBe(tokenFile(dir));
    expect(readFileSync(path, 'utf8')).toBe(`${token}\n`);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(() => createTokenFile(dir)).toThrow(/already exists.*--force/);
    expect(createTokenFile(dir, { force: true }).token).not.toBe(token);
  });

  it('checks a presented token against config first, else the file; missing and wrong differ', () => {
    const dir = tempDir();
    const configured = new JoinTokens('from-config', tokenFile(dir));
    expect(configured.check('from-config')).toBe('ok');
    expect(configured.check('other')).toBe('wrong');
    expect(configured.check(undefined)).toBe('missing');
    expect(configured.check('')).toBe('missing');
    expect(configured.ensure()).toBeUndefined();

    const fromFile = new JoinTokens(undefined, tokenFile(dir));
    expect(fromFile.check('anything')).toBe('wrong');
    expect(fromFile.ensure()).toBe(tokenFile(dir));
    const token = readFileSync(tokenFile(dir), 'utf8').trim();
    expect(fromFile.check(token)).toBe('ok');
    expect(fromFile.ensure()).toBeUndefined();
  });

  it('show reports the effective token and where it came from', () => {
    const dir = tempDir();
    expect(currentToken(staticConfig({}, dir, [plugin]))).toBeUndefined();
    writeFileSync(tokenFile(dir), 'rjt_x\n');
    expect(currentToken(staticConfig({}, dir, [plugin]))).toEqual({ token: 'rjt_x', source: tokenFile(dir) });
    expect(currentToken(staticConfig({ agent: { join_token: 'rjt_cfg' } }, dir, [plugin]))).toEqual({
      token: 'rjt_cfg',
      source: 'config agent.join_token (from test)',
    });
  });
});
