import { InvalidInputError } from '@runner/plugin-sdk';
import { COMMON_PASSWORDS } from './common-passwords.js';

/** Longest password accepted: scrypt hashes any length, but a megabyte password is an attack. */
const MAX_LENGTH = 1024;
const COMMON = new Set(COMMON_PASSWORDS);

/** What a new password must satisfy (auth.password_min_length, auth.password_check_common). */
export interface PasswordRules {
  minLength: number;
  checkCommon: boolean;
}

export const DEFAULT_PASSWORD_RULES: PasswordRules = { minLength: 12, checkCommon: true };

/**
 * Checks a password being set (user add, passwd, one's own change, the admin at start); never a
 * login, where the stored hash decides. Refusals name the field and the rule, never the password.
 */
export class PasswordPolicy {
  constructor(private readonly rules: PasswordRules = DEFAULT_PASSWORD_RULES) {}

  check(password: unknown, field = 'password', userName?: string): string {
    const { minLength } = this.rules;
    if (typeof password !== 'string' || [...password].length < minLength) {
      throw new InvalidInputError(`a password needs at least ${minLength} characters`, { field });
    }
    if (password.length > MAX_LENGTH)
      throw new InvalidInputError(`a password may have at most ${MAX_LENGTH} characters`, { field });
    if (this.rules.checkCommon && isGuessable(password, userName)) {
      throw new InvalidInputError(
        'this password is among the first a guesser tries (a common password, the user name, or one or two characters repeated, give or take digits and symbols around it); choose another',
        { field },
      );
    }
    return password;
  }
}

/**
 * A common password or the user name once case and the digits and symbols people add around a
 * word are set aside (`Password2024!`, `!!admin123`), or one or two characters repeated.
 */
function isGuessable(password: string, userName: string | undefined): boolean {
  const lower = password.toLowerCase();
  const stem = lower.replace(/^[\d\W_]+|[\d\W_]+$/g, '');
  if (COMMON.has(lower) || COMMON.has(stem)) return true;
  if (userName && (stem === userName.toLowerCase() || lower === userName.toLowerCase())) return true;
  return new Set(lower).size <= 2;
}
