import { describe, expect, it } from 'vitest';
import { PasswordPolicy } from './password-policy.js';

describe('the password policy', () => {
  const policy = new PasswordPolicy();
  const refusal = (password: string, user?: string) => {
    try {
      policy.check(password, 'password', user);
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('asks 12 characters by default, counting characters rather than bytes', () => {
    expect(refusal('short-pw-11')).toBe('a password needs at least 12 characters');
    expect(refusal('élan-vital-ok')).toBeUndefined();
    expect(refusal('ééééééééééé')).toMatch(/at least 12/);
  });

  it('refuses common passwords, give or take case and digits or symbols around them, and the user name', () => {
    for (const common of [
      'password1234',
      'Password2024!',
      'qwertyuiop12',
      '123456789012',
      'administrator',
      '!!letmein!!!',
    ])
      expect(refusal(common), common).toMatch(/among the first a guesser tries/);
    expect(refusal('dana-the-admin', 'dana-the-admin')).toMatch(/among the first a guesser tries/);
    expect(refusal('Dana-The-Admin2024', 'dana-the-admin')).toMatch(/among the first a guesser tries/);
    expect(refusal('aaaaaaaaaaaaaa')).toMatch(/among the first a guesser tries/);
    expect(refusal('abababababab')).toMatch(/among the first a guesser tries/);
    expect(refusal('tangerine-orbit-42')).toBeUndefined();
  });

  it('is configurable: another length, and the common check off', () => {
    const lax = new PasswordPolicy({ minLength: 8, checkCommon: false });
    expect(lax.check('password', 'new_password')).toBe('password');
    expect(() => lax.check('seven77', 'new_password')).toThrow(
      expect.objectContaining({
        message: 'a password needs at least 8 characters',
        details: { field: 'new_password' },
      }),
    );
  });
});
