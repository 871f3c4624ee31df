import { mkdtempSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, resolveDataDir } from './config.js';

const temp = () => mkdtempSync(join(tmpdir(), 'runner-config-'));

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
    const config = await loadConfig({
      dataDir,
      env: { RUNNER_HTTP_PORT: '9100', RUNNER_MASTER_ADDR: 'm:50053' },
      flags: { 'http.port': 9200 },
    });
    expect(config.get('http.port', 8080)).toBe(9200);
    expect(config.sourceOf('http.port')).toBe('command-line flag (http.port)');
    expect(config.get('http.bind_address', '0.0.0.0')).toBe('127.0.0.1');
    expect(config.sourceOf('http.bind_address')).toBe(join(dataDir, 'config.yaml'));
    expect(config.get('master.address', '')).toBe('m:50053');
    expect(config.sourceOf('master.address')).toBe('env RUNNER_MASTER_ADDR');
    expect(config.get('grpc.port', 50053)).toBe(50053);
    expect(config.values).toMatchObject({ http: { port: 9200 }, store: { snapshot_journal_bytes: 1024 } });
  });

  it('converts env strings to the type asked for and names a bad one with its source', async () => {
    const config = await loadConfig({ dataDir: temp(), env: { RUNNER_HTTP_PORT: 'eighty', RUNNER_DEBUG: 'yes' } });
    expect(config.debug).toBe(true);
    expect(() => config.get('http.port', 8080)).toThrow(
      'config http.port (from env RUNNER_HTTP_PORT): expected a number, got "eighty"',
    );
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
