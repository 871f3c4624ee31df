import { mkdtempSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { definePlugin } from '@runner/plugin-sdk';
import { loadConfig, resolveDataDir } from './config.js';

const temp = () => mkdtempSync(join(tmpdir(), 'runner-config-'));

// Declarations as the http and store plugins make them; the kernel checks every source against them.
const declaring = definePlugin({
  id: 'declaring',
  version: '1.0.0',
  description: 'declares keys',
  config: {
    'http.port': { schema: { type: 'integer', minimum: 0, maximum: 65535 }, default: 8080, help: 'port' },
    'http.bind_address': { schema: { type: 'string' }, default: '0.0.0.0', help: 'address' },
    'grpc.port': { schema: { type: 'integer' }, default: 50053, help: 'grpc port' },
    'store.snapshot_journal_bytes': { schema: { type: 'integer', minimum: 1 }, help: 'bytes' },
  },
});

describe('loadConfig', () => {
  it('defaults the data directory to ~/.runner, RUNNER_DATA_DIR, then --data-dir', () => {
    expect(resolveDataDir(undefined, {})).toBe(join(homedir(), '.runner'));
    expect(resolveDataDir(undefined, { RUNNER_DATA_DIR: '/srv/runner' })).toBe('/srv/runner');
    expect(resolveDataDir('/flag/dir', { RUNNER_DATA_DIR: '/srv/runner' })).toBe('/flag/dir');
  });

  it('lets flags win over env over the config file over defaults, and says where each came from', async () => {
    const dataDir = temp();
    writeFileSync(
      join(dataDir, 'config.yaml'),
      'http:\n  port: 9000\n  bind_address: 127.0.0.1\nstore:\n  snapshot_journal_bytes: 1024\n',
    );
    const config = await loadConfig(
      {
        dataDir,
        env: { RUNNER_HTTP_PORT: '9100', RUNNER_MASTER_ADDR: 'm:50053' },
        flags: { 'http.port': 9200 },
      },
      [{ plugin: declaring }],
    );
    expect(config.get('http.port')).toBe(9200);
    expect(config.sourceOf('http.port')).toBe('command-line flag (http.port)');
    expect(config.get('http.bind_address')).toBe('127.0.0.1');
    expect(config.sourceOf('http.bind_address')).toBe(join(dataDir, 'config.yaml'));
    expect(config.get('master.address')).toBe('m:50053');
    expect(config.sourceOf('master.address')).toBe('env RUNNER_MASTER_ADDR');
    expect(config.get('grpc.port')).toBe(50053);
    expect(config.sourceOf('grpc.port')).toBe('default');
    expect(config.values).toMatchObject({ http: { port: 9200 }, store: { snapshot_journal_bytes: 1024 } });
  });

  it('converts env strings to the declared type and names a bad one with its source, before any setup', async () => {
    const config = await loadConfig({ dataDir: temp(), env: { RUNNER_HTTP_PORT: '9001', RUNNER_DEBUG: 'yes' } }, [
      { plugin: declaring },
    ]);
    expect(config.debug).toBe(true);
    expect(config.get('http.port')).toBe(9001);
    await expect(
      loadConfig({ dataDir: temp(), env: { RUNNER_HTTP_PORT: 'eighty' } }, [{ plugin: declaring }]),
    ).rejects.toThrow(
      'config http.port (from env RUNNER_HTTP_PORT): expected an integer from 0 to 65535, got "eighty"',
    );
  });

  it('refuses an unknown key under a declared section, with a did-you-mean, and warns about other sections', async () => {
    const dataDir = temp();
    writeFileSync(join(dataDir, 'config.yaml'), 'http:\n  prot: 1\n');
    await expect(loadConfig({ dataDir, env: {} }, [{ plugin: declaring }])).rejects.toThrow(
      `unknown config key http.prot (from ${join(dataDir, 'config.yaml')}); did you mean http.port?`,
    );
    writeFileSync(join(dataDir, 'config.yaml'), 'htp:\n  port: 1\nmetrics:\n  enabled: true\n');
    const config = await loadConfig({ dataDir, env: {} }, [{ plugin: declaring }]);
    expect(config.warnings).toEqual([
      `unknown config key htp.port (from ${join(dataDir, 'config.yaml')}); did you mean http.port? (no loaded plugin reads section htp; ignored)`,
      `unknown config key metrics.enabled (from ${join(dataDir, 'config.yaml')}) (no loaded plugin reads section metrics; ignored)`,
    ]);
    expect(config.get('http.port')).toBe(8080);
  });

  it('reports malformed YAML with file, line and column', async () => {
    const dataDir = temp();
    writeFileSync(join(dataDir, 'config.yaml'), 'http:\n  port: 8080\n bad: [unclosed\n');
    await expect(loadConfig({ dataDir, env: {} })).rejects.toThrow(
      new RegExp(`^${join(dataDir, 'config.yaml')}:3:\\d+: `),
    );
  });

  it('refuses a config file that is not a mapping, and a missing --config file', async () => {
    const dataDir = temp();
    writeFileSync(join(dataDir, 'config.yaml'), '- just\n- a list\n');
    await expect(loadConfig({ dataDir, env: {} })).rejects.toThrow(
      'the config file must be a mapping of keys, not a list',
    );
    await expect(loadConfig({ dataDir, env: {}, configFile: '/nope.yaml' })).rejects.toThrow(
      'config file /nope.yaml does not exist',
    );
  });
});
