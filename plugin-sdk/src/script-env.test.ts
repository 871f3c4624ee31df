import { describe, expect, it } from 'vitest';
import { DEFAULT_SCRIPT_ENV, scriptEnvironment } from './script-env.js';

describe('scriptEnvironment', () => {
  const host = { PATH: '/usr/bin', HOME: '/root', AWS_SECRET_ACCESS_KEY: 'k', RUNNER_TOKEN: 't', TZ: 'UTC' };

  it('passes only the listed variables that are set, never RUNNER_ ones', () => {
    expect({ ...scriptEnvironment(DEFAULT_SCRIPT_ENV, host) }).toEqual({ PATH: '/usr/bin', HOME: '/root', TZ: 'UTC' });
    expect({ ...scriptEnvironment(['AWS_SECRET_ACCESS_KEY', 'RUNNER_TOKEN'], host) }).toEqual({
      AWS_SECRET_ACCESS_KEY: 'k',
    });
  });

  it('answers a map without a prototype, so names such as constructor are not inherited', () => {
    const env = scriptEnvironment(['constructor', 'toString'], host);
    expect(Object.getPrototypeOf(env)).toBeNull();
    expect(Object.keys(env)).toEqual([]);
  });
});
