import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { staticConfig } from '@runner/plugin-sdk/testing';
import { describe, expect, it } from 'vitest';
import { parseLabels, parseMasterAddress, parseMasterAddresses, readAgentConfig } from './config.js';
import { plugin } from './plugin.js';

describe('agent config', () => {
  it('parses master addresses, with port 50053 by default', () => {
    expect(parseMasterAddress('10.0.0.5:6000', 'test')).toBe('10.0.0.5:6000');
    expect(parseMasterAddress('master.example.com', 'test')).toBe('master.example.com:50053');
    expect(parseMasterAddress('[::1]:7000', 'test')).toBe('[::1]:7000');
    expect(parseMasterAddress('grpc://m:1', 'test')).toBe('m:1');
    expect(() => parseMasterAddress('', 'test')).toThrow(/--master <host:port> or set RUNNER_MASTER_ADDR/);
    expect(() => parseMasterAddress('m:99999', 'env RUNNER_MASTER_ADDR')).toThrow(
      /"m:99999" \(from env RUNNER_MASTER_ADDR\) is not host:port/,
    );
  });

  it('parses several masters sharing a store, in order, each as one address', () => {
    expect(parseMasterAddresses('m1:50053, m2 ,[::1]:7000,m1:50053', 'test')).toEqual([
      'm1:50053',
      'm2:50053',
      '[::1]:7000',
    ]);
    expect(parseMasterAddresses('only', 'test')).toEqual(['only:50053']);
    expect(() => parseMasterAddresses('m1:1,m2:99999', 'flag --master')).toThrow(
      /"m2:99999" \(from flag --master\) is not host:port/,
    );
    expect(() => parseMasterAddresses(' , ', 'test')).toThrow(/no master address/);
  });

  it('parses labels', () => {
    expect(parseLabels('zone=a, tier = web,empty=')).toEqual({ zone: 'a', tier: 'web', empty: '' });
    expect(() => parseLabels('zone')).toThrow(/label "zone": expected key=value/);
  });

  it('reads the name, master, token, labels and the reconnection policy', () => {
    const config = readAgentConfig(
      staticConfig(
        {
          agent: {
            name: 'web-1',
            join_token: 'rjt_x',
            labels: { zone: 'a', rack: 7 },
            reconnect_initial_delay: 0.5,
            reconnect_max_retries: 5,
            circuit_breaker_failures: 3,
            circuit_breaker_reset_timeout: 30,
            insecure: true,
          },
          master: { address: 'm:1' },
        },
        '/tmp',
        [plugin],
      ),
    );
    expect(config).toMatchObject({
      name: 'web-1',
      master: 'm:1',
      token: 'rjt_x',
      tls: undefined,
      labels: { zone: 'a', rack: '7' },
      reconnect: {
        initialDelayMs: 500,
        maxDelayMs: 60_000,
        multiplier: 2,
        jitter: 0.2,
        maxRetries: 5,
        breakerFailures: 3,
        breakerResetMs: 30_000,
      },
    });
    expect(
      readAgentConfig(
        staticConfig({ agent: { name: 'a', labels: 'x=1,y=2' }, master: { address: 'localhost' } }, '/tmp', [plugin]),
      ).labels,
    ).toEqual({ x: '1', y: '2' });
  });

  it('reads the master certificate to trust, and refuses what is not one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-agent-config-'));
    const cert = join(dir, 'master.pem');
    writeFileSync(cert, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    const read = (values: Record<string, unknown>) =>
      readAgentConfig(staticConfig({ master: { address: 'm:1' }, ...values }, dir, [plugin]));
    expect(read({ agent: { name: 'a', master_tls_cert: cert } }).tls?.rootCert?.toString()).toMatch(
      /BEGIN CERTIFICATE/,
    );
    expect(read({ agent: { name: 'a', master_tls: true } }).tls).toEqual({
      rootCert: undefined,
      certFile: undefined,
      serverName: undefined,
    });
    expect(() => read({ agent: { name: 'a', master_tls_cert: join(dir, 'nope.pem') } })).toThrow(
      /--master-tls-cert .*nope.pem: no such file/,
    );
    writeFileSync(join(dir, 'junk.pem'), 'hello');
    expect(() => read({ agent: { name: 'a', master_tls_cert: join(dir, 'junk.pem') } })).toThrow(
      /not a PEM certificate/,
    );
  });

  it('refuses a bad name and bad policy values, naming the key', () => {
    const read = (agent: Record<string, unknown>) => () =>
      readAgentConfig(staticConfig({ agent, master: { address: 'localhost' } }, '/tmp', [plugin]));
    expect(read({ name: 'bad name' })).toThrow(/agent name "bad name" is not valid/);
    expect(read({})).toThrow(/no agent name/);
    expect(read({ name: 'a', reconnect_jitter: 2 })).toThrow(
      /config agent.reconnect_jitter \(from test\): expected a number from 0 to 1, got 2/,
    );
    expect(read({ name: 'a', reconnect_max_retries: -1 })).toThrow(/agent.reconnect_max_retries/);
  });
});

describe('an agent without TLS', () => {
  const read = (address: string, agent: Record<string, unknown> = {}) =>
    readAgentConfig(staticConfig({ agent: { name: 'a', ...agent }, master: { address } }, '/tmp', [plugin]));

  it('refuses to send its credential to a master beyond loopback unless --insecure, which it warns about', () => {
    for (const address of ['10.0.0.5:50053', 'master.example.com', '[2001:db8::1]:50053']) {
      expect(() => read(address)).toThrow(
        /refusing to send this agent's credential to .* without TLS: give --master-tls-cert/,
      );
      expect(read(address, { insecure: true }).cleartextWarning).toMatch(
        /^INSECURE: connecting to master .* without TLS/,
      );
    }
    for (const address of ['127.0.0.1:50053', 'localhost', '[::1]:7000'])
      expect(read(address).cleartextWarning).toBeUndefined();
    expect(read('10.0.0.5:50053', { master_tls: true }).cleartextWarning).toBeUndefined();
  });

  it("hands delegated tasks this host's allow-listed variables, PATH HOME LANG TZ by default", () => {
    expect(read('localhost').scriptEnvNames).toEqual(['PATH', 'HOME', 'LANG', 'TZ']);
    expect(read('localhost', { script_env: ['PATH', 'KUBECONFIG'] }).scriptEnvNames).toEqual(['PATH', 'KUBECONFIG']);
  });
});

describe('restart mode', () => {
  it('refuses a mode other than auto, exec or exit before setup', () => {
    expect(() => staticConfig({ agent: { restart_mode: 'sometimes' } }, '/tmp', [plugin])).toThrow(
      'config agent.restart_mode (from test): expected one of auto, exec, exit, got "sometimes"',
    );
  });

  it('exits for systemd to restart, re-executes otherwise, unless configured', async () => {
    const { restartMode } = await import('./commands.js');
    expect(restartMode('auto', { INVOCATION_ID: 'abc' })).toBe('exit');
    expect(restartMode('auto', {})).toBe('exec');
    expect(restartMode('exec', { INVOCATION_ID: 'abc' })).toBe('exec');
    expect(restartMode('exit', {})).toBe('exit');
  });
});
