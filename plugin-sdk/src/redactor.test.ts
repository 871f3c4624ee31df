import { describe, expect, it } from 'vitest';
import { RunnerError } from './errors.js';
import { createRedactor, REDACTED } from './redactor.js';

describe('createRedactor', () => {
  it('masks secret-named fields at any depth, in arrays and task outputs', () => {
    const r = createRedactor();
    const deep: Record<string, unknown> = { password: 'x' };
    let nested = deep;
    for (let i = 0; i < 20; i++) nested = { level: nested };
    const out = r.redact({
      outputs: { github_token: 'ghp_1', list: [{ apiKey: 'k', name: 'n' }], dbPassword: 'p' },
      nested,
      token: null,
    });
    expect(out.outputs).toEqual({
      github_token: REDACTED,
      list: [{ apiKey: REDACTED, name: 'n' }],
      dbPassword: REDACTED,
    });
    let cursor: unknown = out.nested;
    for (let i = 0; i < 20; i++) cursor = (cursor as { level: unknown }).level;
    expect(cursor).toEqual({ password: REDACTED });
    // Nothing to hide in an absent value.
    expect(out.token).toBeNull();
  });

  it('leaves ordinary names alone', () => {
    const r = createRedactor();
    const value = { key: 'k', monkey: 'm', primary_key: 1, tokens: 3, max_tokens: 4 };
    expect(r.redact(value)).toBe(value);
  });

  it('masks a registered value inside longer strings, keys, and its JSON-escaped spelling', () => {
    const r = createRedactor();
    r.addSecret('s3cr"et\\x');
    expect(r.redactText('say s3cr"et\\x twice s3cr"et\\x')).toBe(`say ${REDACTED} twice ${REDACTED}`);
    expect(r.redactText(JSON.stringify({ line: 'v=s3cr"et\\x;' }))).toBe(`{"line":"v=${REDACTED};"}`);
    expect(r.redact({ ['a s3cr"et\\x b']: 1 })).toEqual({ [`a ${REDACTED} b`]: 1 });
  });

  it('masks overlapping and nested secrets whole', () => {
    const r = createRedactor();
    r.addSecret('abcd');
    r.addSecret('cdef');
    r.addSecret('bc12');
    // A leftmost replace would mask "abcd" and leave "ef", the tail of the second secret.
    expect(r.redactText('xabcdefx')).toBe(`x${REDACTED}x`);
    expect(r.redactText('abcdZZcdef')).toBe(`${REDACTED}ZZ${REDACTED}`);
    r.addSecret('hunter22');
    r.addSecret('hunter2');
    expect(r.redactText('p=hunter22 q=hunter2')).toBe(`p=${REDACTED} q=${REDACTED}`);
  });

  it('returns the same object when nothing is masked and copies only changed paths', () => {
    const r = createRedactor();
    r.addSecret('topsecret');
    const untouched = { a: [1, 'two'], b: { c: 'd' } };
    const value = { keep: untouched, change: { msg: 'is topsecret' } };
    const out = r.redact(value);
    expect(out).not.toBe(value);
    expect(out.keep).toBe(untouched);
    expect(out.change.msg).toBe(`is ${REDACTED}`);
    expect(value.change.msg).toBe('is topsecret');
    expect(r.redact(untouched)).toBe(untouched);
  });

  it('ignores short values and forgets a value once every registration is removed', () => {
    const r = createRedactor();
    expect(r.hasSecrets()).toBe(false);
    r.addSecret('on');
    expect(r.redactText('on and on')).toBe('on and on');
    const first = r.addSecret('letmein');
    const second = r.addSecret('letmein');
    first();
    first();
    expect(r.redactText('letmein')).toBe(REDACTED);
    second();
    expect(r.redactText('letmein')).toBe('letmein');
    expect(r.hasSecrets()).toBe(false);
  });

  it('changes its generation whenever the registered secrets change, and only then', () => {
    const r = createRedactor();
    const start = r.generation();
    r.addSecret('on');
    r.redactText('nothing to see');
    expect(r.generation()).toBe(start);
    const forget = r.addSecret('letmein');
    const added = r.generation();
    expect(added).not.toBe(start);
    forget();
    expect(r.generation()).not.toBe(added);
    const after = r.generation();
    forget();
    expect(r.generation()).toBe(after);
  });

  it('redacts errors keeping their class, code and details', () => {
    const r = createRedactor();
    r.addSecret('p4ssw0rd');
    const error = new RunnerError('invalid_input', 'login p4ssw0rd refused', {
      status: 400,
      details: { echo: 'p4ssw0rd' },
    });
    const out = r.redact({ error }).error as RunnerError;
    expect(out).toBeInstanceOf(RunnerError);
    expect(out.message).toBe(`login ${REDACTED} refused`);
    expect(out.stack).not.toContain('p4ssw0rd');
    expect(out.code).toBe('invalid_input');
    expect(JSON.stringify(out.details)).not.toContain('p4ssw0rd');
    expect(error.message).toContain('p4ssw0rd');
  });

  it('terminates on cycles and hostile depth', () => {
    const r = createRedactor();
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    r.addSecret('loopy-secret');
    // A cycle is cut (it could not be serialised anyway), the rest kept.
    expect(r.redact(cyclic)).toEqual({ name: 'loop', self: REDACTED });
    const withSecret: Record<string, unknown> = { note: 'loopy-secret' };
    withSecret.self = withSecret;
    const out = r.redact(withSecret) as { note: string; self: unknown };
    expect(out.note).toBe(REDACTED);
    expect(out.self).toBe(REDACTED);
  });

  it('passes primitives, dates and bytes through', () => {
    const r = createRedactor();
    r.addSecret('abcdef');
    const date = new Date(0);
    const bytes = new Uint8Array([1, 2]);
    expect(r.redact(42)).toBe(42);
    expect(r.redact(undefined)).toBeUndefined();
    expect(r.redact(date)).toBe(date);
    expect(r.redact(bytes)).toBe(bytes);
    expect(r.redact('xabcdefx')).toBe(`x${REDACTED}x`);
  });
});

describe('the forms a secret is printed in (issue 22)', () => {
  const secret = 'S3cr3t/V@lue+with space&"quote"';
  const redactor = createRedactor();
  redactor.addSecret(secret);
  const leaks = (text: string) => {
    const masked = redactor.redactText(text);
    // The value, and what decoding any base64 or URL form left in the masked text gives back.
    const decoded = [masked, decodeURIComponent(masked.replace(/\+/g, ' ').replace(/%(?![0-9a-f]{2})/gi, '%25'))];
    for (const run of masked.match(/[A-Za-z0-9+/_-]{8,}/g) ?? [])
      decoded.push(Buffer.from(run.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('latin1'));
    return decoded.some((text) => text.includes(secret) || text.includes('S3cr3t/V@lue'));
  };

  it('masks it raw, inside strings, JSON-escaped, URL-encoded and base64 at every alignment', () => {
    const samples = [
      `password is ${secret}!`,
      JSON.stringify({ note: `x${secret}y` }),
      `https://h/?p=${encodeURIComponent(secret)}&q=1`,
      `lower ${encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase())}`,
      `form ${encodeURIComponent(secret).replace(/%20/g, '+')}`,
      ...['', 'a', 'ab', 'abc'].map((prefix) => `b64 ${Buffer.from(prefix + secret + 'tail').toString('base64')}`),
      `url-safe ${Buffer.from('ab' + secret).toString('base64url')}`,
    ];
    for (const sample of samples) {
      expect(leaks(sample), sample).toBe(false);
      expect(redactor.redactText(sample)).toContain(REDACTED);
    }
    expect(redactor.redactText('nothing secret here')).toBe('nothing secret here');
  });

  it('masks a value split across the pieces of a stream, whatever the cut', () => {
    const text = `start ${secret} middle ${Buffer.from(secret).toString('base64')} end ${secret}`;
    for (let cut = 1; cut < text.length; cut += 3) {
      const masker = redactor.streamMasker();
      const out = masker.write(text.slice(0, cut)) + masker.write(text.slice(cut)) + masker.end();
      expect(out, `cut at ${cut}`).toBe(redactor.redactText(text));
    }
    const byChar = redactor.streamMasker();
    let out = '';
    for (const char of text) out += byChar.write(char);
    expect(out + byChar.end()).toBe(redactor.redactText(text));
    // Nothing registered: pieces pass as they come.
    const plain = createRedactor().streamMasker();
    expect(plain.write('abc')).toBe('abc');
  });
});
