import { describe, expect, it } from 'vitest';
import { LoginThrottle } from './login-throttle.js';

/** A throttle of 3 on a clock the test moves. */
function throttle() {
  let now = 1_000_000;
  return { throttle: new LoginThrottle(3, () => now), advance: (ms: number) => (now += ms) };
}

const fail = (t: LoginThrottle, user: string, address: string) => {
  t.check(user, address);
  t.attempt(user, address);
};
const refusal = (t: LoginThrottle, user: string, address: string) => {
  try {
    t.check(user, address);
    return undefined;
  } catch (error) {
    return error as { status: number; details: { retry_after_seconds: number } };
  }
};

describe('login throttling', () => {
  it('holds a user back from one address after the threshold, saying for how long', () => {
    const { throttle: t } = throttle();
    for (let i = 0; i < 3; i++) fail(t, 'bob', '10.0.0.9');
    expect(refusal(t, 'bob', '10.0.0.9')).toMatchObject({ status: 429, details: { retry_after_seconds: 1 } });
    // The same user elsewhere is not held back by one address's failures.
    expect(refusal(t, 'bob', '10.0.0.7')).toBeUndefined();
  });

  it('does not lock other users out of a shared address when one client there sprays user names', () => {
    const { throttle: t } = throttle();
    for (let i = 0; i < 200; i++) fail(t, `user-${i}`, '192.0.2.1');
    expect(refusal(t, 'alice', '192.0.2.1')).toBeUndefined();
  });

  it('holds a user back across addresses at four times the threshold', () => {
    const { throttle: t, advance } = throttle();
    for (let i = 0; i < 12; i++) fail(t, 'bob', `10.0.1.${i}`);
    expect(refusal(t, 'bob', '10.0.2.1')).toMatchObject({ status: 429 });
    expect(refusal(t, 'carol', '10.0.2.1')).toBeUndefined();
    advance(2000);
    expect(refusal(t, 'bob', '10.0.2.1')).toBeUndefined();
  });

  it('a success takes its attempt back', () => {
    const { throttle: t } = throttle();
    for (let i = 0; i < 2; i++) fail(t, 'bob', '10.0.0.9');
    t.attempt('bob', '10.0.0.9');
    t.succeeded('bob', '10.0.0.9');
    fail(t, 'bob', '10.0.0.9');
    expect(refusal(t, 'bob', '10.0.0.9')).toBeUndefined();
  });
});
