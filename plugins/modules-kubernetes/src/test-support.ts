import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A faked Kubernetes API server, as no cluster can run here: the discovery documents, and
 * get/list/server-side-apply/delete of objects kept in memory, with resourceVersion bumped only
 * by a write that changes something (as the real server does), dry-run honoured, a Deployment
 * whose rollout completes after a few reads, and a pod's log. Only what the k8s module's tests
 * reach; every request is recorded.
 */
export interface FakeCluster {
  url: string;
  objects: Map<string, Record<string, any>>;
  requests: { method: string; path: string; authorization?: string; contentType?: string }[];
  close(): Promise<void>;
}

const RESOURCES: Record<string, { group: string; kind: string; plural: string }[]> = {
  '/api/v1': [
    { group: 'v1', kind: 'ConfigMap', plural: 'configmaps' },
    { group: 'v1', kind: 'Pod', plural: 'pods' },
  ],
  '/apis/apps/v1': [{ group: 'apps/v1', kind: 'Deployment', plural: 'deployments' }],
};

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

const notFound = (name: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  reason: 'NotFound',
  code: 404,
  message: `"${name}" not found`,
});

/** The object without what the server sets, to tell whether a write changes it. */
function content(object: Record<string, any>): string {
  const { resourceVersion: _r, generation: _g, uid: _u, ...metadata } = object.metadata ?? {};
  const { status: _s, ...rest } = object;
  return JSON.stringify({ ...rest, metadata });
}

export async function startFakeCluster(
  options: { podLog?: string; readsToRollOut?: number } = {},
): Promise<FakeCluster> {
  const objects = new Map<string, Record<string, any>>();
  const requests: FakeCluster['requests'] = [];
  let version = 100;
  const reads = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://x');
      requests.push({
        method: req.method ?? '',
        path: url.pathname + url.search,
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
      });
      const send = (status: number, value: unknown, type = 'application/json') => {
        res.writeHead(status, { 'content-type': type }).end(typeof value === 'string' ? value : JSON.stringify(value));
      };
      const discovery = RESOURCES[url.pathname];
      if (discovery) {
        return send(200, {
          kind: 'APIResourceList',
          groupVersion: discovery[0].group,
          resources: discovery.map((r) => ({
            name: r.plural,
            singularName: '',
            namespaced: true,
            kind: r.kind,
            verbs: ['get', 'list', 'patch', 'delete'],
          })),
        });
      }
      const match = /^\/(?:api\/v1|apis\/apps\/v1)\/namespaces\/([^/]+)\/([^/]+)(?:\/([^/]+))?(?:\/(log))?$/.exec(
        url.pathname,
      );
      if (!match) return send(404, notFound(url.pathname));
      const [, namespace, plural, name, log] = match;
      const key = `${namespace}/${plural}/${name}`;
      if (log) return send(200, options.podLog ?? '', 'text/plain');
      if (!name && req.method === 'GET') {
        const selector = url.searchParams.get('labelSelector');
        const items = [...objects.entries()]
          .filter(([k]) => k.startsWith(`${namespace}/${plural}/`))
          .map(([, o]) => o)
          .filter(
            (o) =>
              !selector ||
              selector.split(',').every((term) => o.metadata.labels?.[term.split('=')[0]] === term.split('=')[1]),
          );
        return send(200, { kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: String(version) }, items });
      }
      const existing = objects.get(key);
      if (req.method === 'GET') {
        if (!existing) return send(404, notFound(name));
        if (plural === 'deployments') rollOut(existing, key);
        return send(200, existing);
      }
      if (req.method === 'DELETE') {
        if (!existing) return send(404, notFound(name));
        objects.delete(key);
        return send(200, { kind: 'Status', apiVersion: 'v1', status: 'Success' });
      }
      if (req.method === 'PATCH') {
        const incoming = JSON.parse(await body(req)) as Record<string, any>;
        const next: Record<string, any> = {
          ...incoming,
          metadata: { ...incoming.metadata, namespace, uid: existing?.metadata.uid ?? `uid-${name}` },
        };
        const unchanged = existing !== undefined && content(existing) === content(next);
        next.metadata.resourceVersion = unchanged ? existing.metadata.resourceVersion : String(++version);
        next.metadata.generation = unchanged ? existing.metadata.generation : (existing?.metadata.generation ?? 0) + 1;
        if (existing?.status) next.status = existing.status;
        if (url.searchParams.get('dryRun') !== 'All' && !unchanged) {
          objects.set(key, next);
          reads.set(key, 0);
        }
        return send(existing ? 200 : 201, next);
      }
      send(405, { message: 'method not allowed' });
    })();
  });
  /** A Deployment's status catches up with its spec after `readsToRollOut` reads. */
  function rollOut(deployment: Record<string, any>, key: string) {
    const count = (reads.get(key) ?? 0) + 1;
    reads.set(key, count);
    const replicas = deployment.spec?.replicas ?? 1;
    const done = count >= (options.readsToRollOut ?? 2);
    deployment.status = {
      observedGeneration: deployment.metadata.generation,
      replicas,
      updatedReplicas: replicas,
      availableReplicas: done ? replicas : 0,
    };
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    objects,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
