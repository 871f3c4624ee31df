import { describe, expect, it } from 'vitest';
import { agentEnv } from './install-plan.js';

describe('the installed agent’s environment', () => {
  it('says --insecure only when given: otherwise the agent refuses a remote master without TLS', () => {
    const base = agentEnv('/opt/a', 'web-9', '10.0.0.5:50053', 'rjt_x', false);
    expect(base).not.toHaveProperty('RUNNER_AGENT_INSECURE');
    expect(agentEnv('/opt/a', 'web-9', '10.0.0.5:50053', 'rjt_x', false, true)).toMatchObject({
      RUNNER_AGENT_INSECURE: 'true',
      RUNNER_MASTER_ADDR: '10.0.0.5:50053',
    });
  });
});
