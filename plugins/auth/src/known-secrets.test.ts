import { createRedactor } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { KnownSecrets } from './known-secrets.js';

describe('KnownSecrets', () => {
  it('masks a secret once registered, the new one only after a change, none after forget', () => {
    const redactor = createRedactor();
    const secrets = new KnownSecrets(redactor);
    secrets.set('password:alice', 'first-password-1');
    secrets.set('password:alice', 'first-password-1');
    expect(redactor.redactText('x first-password-1 y')).toBe('x *** y');
    secrets.set('password:alice', 'second-password-2');
    expect(redactor.redactText('first-password-1 second-password-2')).toBe('first-password-1 ***');
    secrets.forget('password:alice');
    expect(redactor.hasSecrets()).toBe(false);
  });
});
