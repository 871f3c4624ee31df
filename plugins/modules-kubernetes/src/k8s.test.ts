import { KubeConfig } from '@kubernetes/client-node';
import { TemplateEngineRef } from '@runner/plugin-sdk';
import { luaCallContext, setUpLuaModules, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as templatePlugin } from '@runner/plugin-template';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createK8sModule, manifestObjects, resolveKind, rolloutDone } from './k8s.js';
import { startFakeCluster, type FakeCluster } from './test-support.js';

describe('k8s naming and manifests', () => {
  it('takes kinds as kubectl does', () => {
    expect(resolveKind('k8s.get', 'deploy', undefined)).toEqual(['Deployment', 'apps/v1']);
    expect(resolveKind('k8s.get', 'ConfigMaps', undefined)).toEqual(['ConfigMap', 'v1']);
    expect(resolveKind('k8s.get', 'ingresses', undefined)).toEqual(['Ingress', 'networking.k8s.io/v1']);
    expect(resolveKind('k8s.get', 'Certificate', 'cert-manager.io/v1')).toEqual(['Certificate', 'cert-manager.io/v1']);
    expect(() => resolveKind('k8s.get', 'Certificate', undefined)).toThrow(/give opts.api_version/);
  });

  it('reads multi-document YAML and refuses objects without a name', async () => {
    const objects = await manifestObjects(
      'k8s.apply',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n',
    );
    expect(objects.map((o) => o.metadata?.name)).toEqual(['a', 'b']);
    await expect(manifestObjects('k8s.apply', { apiVersion: 'v1', kind: 'ConfigMap' })).rejects.toThrow(
      /object 1 .* metadata.name/,
    );
  });

  it('follows kubectl rollout status rules', () => {
    const deployment = (status: Record<string, number>) => ({
      kind: 'Deployment',
      metadata: { generation: 2 },
      spec: { replicas: 3 },
      status,
    });
    expect(rolloutDone(deployment({ observedGeneration: 1 })).done).toBe(false);
    expect(
      rolloutDone(deployment({ observedGeneration: 2, updatedReplicas: 3, replicas: 4, availableReplicas: 3 })).message,
    ).toMatch(/1 old replicas/);
    expect(
      rolloutDone(deployment({ observedGeneration: 2, updatedReplicas: 3, replicas: 3, availableReplicas: 3 })).done,
    ).toBe(true);
  });
});

// No Kubernetes cluster can run here: a faked API server (test-support.ts) answers instead.
describe('k8s module against a faked API server', () => {
  let cluster: FakeCluster;
  let k8s: ReturnType<typeof createK8sModule>;
  let kernel: TestKernel;
  beforeAll(async () => {
    cluster = await startFakeCluster({ podLog: 'line 1\nline 2\n', readsToRollOut: 3 });
    ({ kernel } = await setUpLuaModules([templatePlugin]));
    const templates = kernel.get(TemplateEngineRef);
    k8s = createK8sModule({
      pollMs: 10,
      render: (template, context, syntax) => templates.render(template, context, { syntax }),
      loadConfig: async () => {
        const kc = new KubeConfig();
        kc.loadFromOptions({
          clusters: [{ name: 'fake', server: cluster.url, skipTLSVerify: true }],
          users: [{ name: 'ci', token: 'test-token' }],
          contexts: [{ name: 'fake', cluster: 'fake', user: 'ci', namespace: 'apps' }],
          currentContext: 'fake',
        });
        return kc;
      },
    });
  });
  afterAll(async () => {
    await cluster.close();
    await kernel.stop();
  });

  const manifest = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels: { app: web }
data:
  mode: "{{ mode }}"
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  replicas: 2
  template: { spec: { containers: [{ name: web, image: "nginx:1.27" }] } }
`;

  it('applies a templated manifest once, changes nothing the second time, and nothing under dry-run', async () => {
    const { call } = luaCallContext();
    const dry = await k8s.apply(luaCallContext({ dryRun: true }).call, manifest, { context: { mode: 'a' } });
    expect(dry).toMatchObject({ changed: true, dry_run: true });
    expect(cluster.objects.size).toBe(0);

    const first = await k8s.apply(call, manifest, { context: { mode: 'a' } });
    expect(first).toEqual({
      changed: true,
      objects: [
        { name: 'ConfigMap/settings', namespace: 'apps', changed: true, action: 'created' },
        { name: 'Deployment/web', namespace: 'apps', changed: true, action: 'created' },
      ],
    });
    expect(cluster.objects.get('apps/configmaps/settings')?.data).toEqual({ mode: 'a' });
    const again = (await k8s.apply(call, manifest, { context: { mode: 'a' } })) as {
      changed: boolean;
      objects: { action: string }[];
    };
    expect(again.changed).toBe(false);
    expect(again.objects.map((o) => o.action)).toEqual(['unchanged', 'unchanged']);

    expect(await k8s.apply(luaCallContext({ dryRun: true }).call, manifest, { context: { mode: 'b' } })).toMatchObject({
      changed: true,
      dry_run: true,
    });
    expect(cluster.objects.get('apps/configmaps/settings')?.data).toEqual({ mode: 'a' });
    const configured = (await k8s.apply(call, manifest, { context: { mode: 'b' } })) as {
      objects: { action: string }[];
    };
    expect(configured.objects.map((o) => o.action)).toEqual(['configured', 'unchanged']);

    const patch = cluster.requests.find((r) => r.method === 'PATCH')!;
    expect(patch.contentType).toBe('application/apply-patch+yaml');
    expect(patch.path).toContain('fieldManager=runner');
    expect(patch.authorization).toBe('Bearer test-token');
  });

  it('gets one object or a list by selector, waits for a rollout, reads logs, deletes once', async () => {
    const { call } = luaCallContext();
    await k8s.apply(call, manifest, { context: { mode: 'a' } });
    expect(await k8s.get(call, 'cm', 'settings')).toMatchObject({ kind: 'ConfigMap', data: { mode: 'a' } });
    expect(await k8s.get(call, 'cm', 'nope')).toBeNull();
    expect(((await k8s.get(call, 'configmaps', null, { selector: 'app=web' })) as unknown[]).length).toBe(1);
    expect(((await k8s.get(call, 'configmaps', null, { selector: 'app=db' })) as unknown[]).length).toBe(0);

    expect(await k8s.rollout_status(call, 'deploy', 'web', { timeout: '20s' })).toEqual({
      done: true,
      message: 'deployment rolled out',
    });
    expect(await k8s.logs(call, 'web-abc', { tail: 2 })).toBe('line 1\nline 2\n');
    expect(
      cluster.requests.some(
        (r) => r.path.startsWith('/api/v1/namespaces/apps/pods/web-abc/log') && r.path.includes('tailLines=2'),
      ),
    ).toBe(true);

    expect(await k8s.delete(luaCallContext({ dryRun: true }).call, 'configmap', 'settings')).toMatchObject({
      changed: true,
      dry_run: true,
    });
    expect(await k8s.delete(call, 'configmap', 'settings')).toEqual({ changed: true });
    expect(await k8s.delete(call, 'configmap', 'settings')).toEqual({ changed: false });
    await expect(k8s.rollout_status(call, 'configmap', 'x')).rejects.toThrow(/Deployment, StatefulSet or DaemonSet/);
  });
});
