import { describe, expect, it } from 'vitest';
import { createRedactor } from './redactor.js';

describe('createRedactor', () => {
  it('masks secret-named fields at any depth and registered values inside longer strings', () => {
    const redactor = createRedactor();
    redactor.addSecret('s3cr3t-value');
    const input = {
      user: 'ops',
      password: 'hunter22',
      nested: { list: [{ apiToken: 'x' }, 'prefix s3cr3t-value suffix'] },
      note: 'fine',
    };
    expect(redactor.redact(input)).toEqual({
      user: 'ops',
      password: '[redacted]',
      nested: { list: [{ apiToken: 'x' }, 'prefix [redacted] suffix'] },
      note: 'fine',
    });
    expect(input.password).toBe('hunter22');
    expect(redactor.redactText('token=s3cr3t-value;')).toBe('token=[redacted];');
  });

  it('returns the value itself when nothing needed masking', () => {
    const redactor = createRedactor();
    const value = { a: [1, { b: 'c' }] };
    expect(redactor.redact(value)).toBe(value);
  });

  it('masks the longest secret whole, and forgets a value once every registration is removed', () => {
    const redactor = createRedactor();
    const short = redactor.addSecret('abcd');
    const long = redactor.addSecret('abcdefgh');
    expect(redactor.redactText('abcdefgh abcd')).toBe('[redacted] [redacted]');
    const again = redactor.addSecret('abcd');
    short();
    short();
    expect(redactor.redactText('abcd')).toBe('[redacted]');
    again();
    long();
    expect(redactor.redactText('abcdefgh abcd')).toBe('abcdefgh abcd');
  });

  it('ignores values too short to mask safely, and survives cycles', () => {
    const redactor = createRedactor();
    redactor.addSecret('on');
    expect(redactor.redactText('turn it on')).toBe('turn it on');
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    expect(redactor.redact(cyclic)).toEqual({ name: 'loop', self: '[redacted]' });
  });

  it('masks a registered value in an error message', () => {
    const redactor = createRedactor();
    redactor.addSecret('p4ssw0rd!');
    const error = redactor.redact(new Error('login failed for p4ssw0rd!'));
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toBe('login failed for [redacted]');
  });
});
