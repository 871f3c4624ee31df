import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandContext } from '@runner/plugin-sdk';
import { staticConfig } from '@runner/plugin-sdk/testing';
import { describe, expect, it } from 'vitest';
import { agentEnv, planFrom } from './install-plan.js';

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

describe('--ssh-profile', () => {
  const plan = (options: Record<string, unknown>) =>
    planFrom('install', { args: ['web-9'], options: { master: '10.0.0.1:50053', ...options } }, {
      config: staticConfig({}, mkdtempSync(join(tmpdir(), 'runner-plan-'))),
    } as unknown as CommandContext);

  it('takes the place of the CLI’s own SSH target, and is refused beside it', async () => {
    const viaProfile = await plan({ sshProfile: 'box' });
    expect(viaProfile).toMatchObject({ sshProfile: 'box', master: '10.0.0.1:50053' });
    expect(viaProfile).not.toHaveProperty('target');
    await expect(plan({ sshProfile: 'box', sshHost: 'h', acceptNewHostKey: true })).rejects.toThrow(
      '--ssh-profile: the profile says how to reach the host; leave out --ssh-host, --accept-new-host-key',
    );
  });
});
