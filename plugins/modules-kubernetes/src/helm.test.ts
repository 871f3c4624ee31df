import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { luaCallContext } from '@runner/plugin-sdk/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHelmModule, releaseMatches } from './helm.js';

describe('release comparison', () => {
  const release = {
    name: 'web',
    version: 3,
    info: { status: 'deployed' },
    chart: { metadata: { name: 'nginx', version: '1.2.0' } },
    config: { replicas: 2 },
    manifest: 'kind: Deployment\n',
  };
  it('matches only a deployed release of the same chart, values and manifest', () => {
    expect(releaseMatches(release, { ...release, version: 4, manifest: 'kind: Deployment' })).toBe(true);
    expect(releaseMatches(release, { ...release, config: { replicas: 3 } })).toBe(false);
    expect(releaseMatches(release, { ...release, chart: { metadata: { name: 'nginx', version: '1.3.0' } } })).toBe(
      false,
    );
    expect(releaseMatches({ ...release, info: { status: 'failed' } }, release)).toBe(false);
    expect(releaseMatches(null, release)).toBe(false);
  });
});

// No cluster or helm binary is available here: fixtures/fake-helm.mjs stands in for the CLI,
// answering the commands the module runs over releases kept in a JSON file.
describe('helm module against a stand-in helm', () => {
  let dir: string;
  const saved = process.env.FAKE_HELM_STATE;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'runner-helm-test-'));
    process.env.FAKE_HELM_STATE = join(dir, 'state.json');
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.FAKE_HELM_STATE;
    else process.env.FAKE_HELM_STATE = saved;
    rmSync(dir, { recursive: true, force: true });
  });
  const helm = createHelmModule({ bin: join(import.meta.dirname, 'fixtures/fake-helm.mjs') });

  it('installs once, leaves an identical release, upgrades on new values, uninstalls once', async () => {
    const { call } = luaCallContext();
    const dry = luaCallContext({ dryRun: true }).call;
    const opts = { namespace: 'web', values: { replicas: 2, password: 'hunter2' }, version: '1.2.0' };
    expect(await helm.install(dry, 'web', 'bitnami/nginx', opts)).toMatchObject({
      changed: true,
      dry_run: true,
      action: 'install',
    });
    expect(await helm.list(call, { namespace: 'web' })).toEqual([]);

    expect(await helm.install(call, 'web', 'bitnami/nginx', opts)).toEqual({
      changed: true,
      action: 'install',
      revision: 1,
      status: 'deployed',
    });
    expect(await helm.install(call, 'web', 'bitnami/nginx', opts)).toEqual({
      changed: false,
      revision: 1,
      status: 'deployed',
    });
    expect(await helm.install(call, 'web', 'bitnami/nginx', { ...opts, version: '1.3.0' })).toMatchObject({
      changed: true,
      action: 'upgrade',
      revision: 2,
    });
    expect(await helm.status(call, 'web', { namespace: 'web' })).toMatchObject({
      revision: 2,
      status: 'deployed',
      chart: { version: '1.3.0' },
    });

    const calls = readFileSync(`${process.env.FAKE_HELM_STATE}.calls`, 'utf8');
    expect(calls).not.toContain('hunter2');
    expect(calls).toContain('"--values"');

    expect(await helm.uninstall(call, 'web', { namespace: 'web' })).toEqual({ changed: true });
    expect(await helm.uninstall(call, 'web', { namespace: 'web' })).toEqual({ changed: false });
    expect(await helm.status(call, 'web', { namespace: 'web' })).toBeNull();
  });

  it('adds a repository once, its password on stdin', async () => {
    const { call } = luaCallContext();
    const opts = { username: 'ci', password: 's3cret' };
    expect(await helm.repo_add(call, 'bitnami', 'https://charts.example.com', opts)).toEqual({ changed: true });
    expect(await helm.repo_add(call, 'bitnami', 'https://charts.example.com', opts)).toEqual({ changed: false });
    expect(JSON.parse(readFileSync(process.env.FAKE_HELM_STATE!, 'utf8')).password).toBe('s3cret');
    expect(readFileSync(`${process.env.FAKE_HELM_STATE}.calls`, 'utf8')).not.toContain('s3cret');
  });
});
