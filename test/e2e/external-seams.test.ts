// A plugin from outside the repository, built against the SDK alone, plugs into every seam of a
// real master: a config key set by an option it adds to `runner server`, a router guard, a static
// mount, a declared route (also in the OpenAPI document) and a beforeTask run tap that refuses.
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localAuth, repoRoot, runRunner, spawnRunner, tempDataDir, waitForOutput } from './helpers.js';

const dataDir = tempDataDir('runner-seams-');
// A copy outside the repository: no node_modules above it holds the SDK, as for a third party.
const pluginsDir = join(tempDataDir('runner-seams-plugins-'), 'plugins');
let child: ReturnType<typeof spawnRunner>;
let base: string;

beforeAll(async () => {
  cpSync(join(repoRoot, 'test/fixtures/external-plugins/gatekeeper'), join(pluginsDir, 'gatekeeper'), {
    recursive: true,
  });
  child = spawnRunner(
    [
      '--plugins-dir',
      pluginsDir,
      'server',
      '--http-port',
      '0',
      '--port',
      '0',
      '--bind-address',
      '127.0.0.1',
      '--refuse-prefix',
      'nope-',
    ],
    { env: { RUNNER_DATA_DIR: dataDir } },
  );
  const [, address] = await waitForOutput(child, /REST API listening on (127\.0\.0\.1:\d+)/);
  base = `http://${address}`;
}, 30_000);

afterAll(() => {
  if (child.exitCode === null) child.kill('SIGTERM');
});

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${base}/api/v1${path}`, {
    ...init,
    headers: { ...localAuth(dataDir), 'content-type': 'application/json', ...(init.headers as object) },
  });

describe('an external plugin using the seams', () => {
  it('reads its config key, set by the option it added to runner server', async () => {
    expect(await (await api('/gatekeeper')).json()).toEqual({ refuse_prefix: 'nope-' });
    const help = await runRunner(['--plugins-dir', pluginsDir, 'server', '--help'], {
      env: { RUNNER_DATA_DIR: tempDataDir() },
    });
    expect(help.stdout).toContain('--refuse-prefix <prefix>');
    const shown = await runRunner(['--plugins-dir', pluginsDir, 'config', 'show'], {
      env: { RUNNER_DATA_DIR: tempDataDir() },
    });
    expect(shown.stdout).toMatch(/gatekeeper\.refuse_prefix\s+"?forbidden-"?\s+.*default/);
  });

  it('guards every route and serves its static files outside /api/v1', async () => {
    expect((await api('/health', { headers: { 'x-gatekeeper': 'closed' } })).status).toBe(403);
    expect((await api('/health')).status).toBe(200);
    const page = await fetch(`${base}/gatekeeper/some/deep/link`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('served by an external plugin');
    const doc = (await (await api('/openapi.json')).json()) as { paths: Record<string, unknown> };
    expect(doc.paths['/api/v1/gatekeeper']).toBeDefined();
  });

  it('refuses a task through its beforeTask run tap, with the reason recorded', async () => {
    const content =
      'version: "1.0"\ntasks:\n  - name: fine\n    exec:\n      script: return true\n  - name: nope-deploy\n    exec:\n      script: return true\n';
    const started = await api('/workflows/run', { method: 'POST', body: JSON.stringify({ content }) });
    expect(started.status).toBe(202);
    const { id } = (await started.json()) as { id: string };
    let run: { status: string; tasks: { name: string; status: string; message?: string }[] } | undefined;
    for (let i = 0; i < 100; i++) {
      run = (await (await api(`/executions/${id}`)).json()) as typeof run;
      if (run && run.status !== 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(run?.status).toBe('failed');
    expect(run?.tasks.find((t) => t.name === 'fine')?.status).toBe('succeeded');
    const refused = run?.tasks.find((t) => t.name === 'nope-deploy');
    expect(refused?.status).toBe('failed');
    expect(refused?.message).toContain('gatekeeper: tasks named nope-* may not run');
  });
});
