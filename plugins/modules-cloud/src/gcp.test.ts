import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LuaValue } from '@runner/plugin-sdk';
import { luaCallContext } from '@runner/plugin-sdk/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGcpModule, gcsMd5 } from './gcp.js';

/**
 * No Google Cloud service can run here, and no emulator of Cloud Storage or Compute Engine is on
 * npm: a faked endpoint answers the official SDKs' requests (the Cloud Storage JSON API and
 * Compute Engine's REST API, as documented) over objects and one instance kept in memory.
 */
interface Stored {
  body: Buffer;
  contentType?: string;
}

function read(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

/** The media part of a multipart/related upload (JSON metadata first, then the content). */
function multipartMedia(body: Buffer, contentType: string): { metadata: Record<string, string>; media: Buffer } {
  const boundary = /boundary="?([^";]+)"?/.exec(contentType)![1];
  const text = body.toString('latin1');
  const parts = text.split(`--${boundary}`).slice(1, -1);
  const payload = (part: string) => part.slice(part.indexOf('\r\n\r\n') + 4, part.length - 2);
  return {
    metadata: JSON.parse(payload(parts[0])) as Record<string, string>,
    media: Buffer.from(payload(parts[1]), 'latin1'),
  };
}

describe('gcp module against a faked Cloud Storage and Compute Engine', () => {
  let server: Server;
  let connection: Record<string, LuaValue>;
  const objects = new Map<string, Stored>();
  const uploads: string[] = [];
  const authorizations = new Set<string | undefined>();
  let status = 'TERMINATED';
  beforeAll(async () => {
    server = createServer((req, res) => {
      void (async () => {
        authorizations.add(req.headers.authorization);
        const url = new URL(req.url ?? '/', 'http://x');
        const json = (code: number, value: unknown) =>
          res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(value));
        const resource = (name: string, o: Stored) => ({
          kind: 'storage#object',
          bucket: 'b',
          name,
          size: String(o.body.length),
          md5Hash: gcsMd5(o.body),
          contentType: o.contentType,
          updated: '2026-11-28T06:00:00Z',
        });
        const body = await read(req);
        let m = /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/.exec(url.pathname);
        if (m && req.method === 'POST') {
          const { metadata, media } = multipartMedia(body, String(req.headers['content-type']));
          const name = metadata.name ?? url.searchParams.get('name')!;
          uploads.push(name);
          objects.set(name, { body: media, contentType: metadata.contentType });
          return json(200, resource(name, objects.get(name)!));
        }
        m = /^\/storage\/v1\/b\/([^/]+)\/o(?:\/(.+))?$/.exec(url.pathname);
        if (m) {
          const name = m[2] === undefined ? undefined : decodeURIComponent(m[2]);
          if (name === undefined) {
            const prefix = url.searchParams.get('prefix') ?? '';
            return json(200, {
              kind: 'storage#objects',
              items: [...objects].filter(([k]) => k.startsWith(prefix)).map(([k, o]) => resource(k, o)),
            });
          }
          const stored = objects.get(name);
          if (!stored)
            return json(404, {
              error: {
                code: 404,
                message: 'No such object',
                errors: [{ reason: 'notFound', message: 'No such object' }],
              },
            });
          if (req.method === 'DELETE') {
            objects.delete(name);
            return res.writeHead(204).end();
          }
          if (url.searchParams.get('alt') === 'media')
            return res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(stored.body);
          return json(200, resource(name, stored));
        }
        m = /^\/compute\/v1\/projects\/([^/]+)\/zones\/([^/]+)\/instances(?:\/([^/]+))?(?:\/(start|stop))?$/.exec(
          url.pathname,
        );
        if (m) {
          const instance = {
            kind: 'compute#instance',
            id: '4242',
            name: 'web-1',
            status,
            machineType: `zones/${m[2]}/machineTypes/e2-small`,
            labels: { role: 'web' },
            networkInterfaces: [{ networkIP: '10.128.0.2' }],
          };
          if (m[4]) {
            status = m[4] === 'start' ? 'STAGING' : 'STOPPING';
            return json(200, { kind: 'compute#operation', name: `operation-${m[4]}-1`, status: 'RUNNING', zone: m[2] });
          }
          if (m[3])
            return m[3] === 'web-1'
              ? json(200, instance)
              : json(404, { error: { code: 404, message: `instance ${m[3]} not found` } });
          return json(200, { kind: 'compute#instanceList', items: [instance] });
        }
        json(404, { error: { code: 404, message: `no route ${url.pathname}` } });
      })();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    connection = { project: 'demo-project', access_token: 'ya29.test-token', endpoint: `http://127.0.0.1:${port}` };
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('writes an object only when its content differs, reads, lists and deletes it', async () => {
    const gcp = createGcpModule();
    const { call } = luaCallContext();
    expect(
      await gcp.storage_put(luaCallContext({ dryRun: true }).call, 'configs', 'web/app.json', '{"a":1}', connection),
    ).toMatchObject({ changed: true, dry_run: true });
    expect(objects.size).toBe(0);
    const md5 = createHash('md5').update('{"a":1}').digest('base64');
    expect(
      await gcp.storage_put(call, 'configs', 'web/app.json', '{"a":1}', {
        ...connection,
        content_type: 'application/json',
      }),
    ).toEqual({ changed: true, md5 });
    expect(await gcp.storage_put(call, 'configs', 'web/app.json', '{"a":1}', connection)).toEqual({
      changed: false,
      md5,
    });
    expect(uploads).toEqual(['web/app.json']);
    expect(objects.get('web/app.json')?.contentType).toBe('application/json');
    expect(await gcp.storage_get(call, 'configs', 'web/app.json', connection)).toBe('{"a":1}');
    expect(await gcp.storage_get(call, 'configs', 'web/missing.json', connection)).toBeNull();
    expect(await gcp.storage_list(call, 'configs', { ...connection, prefix: 'web/' })).toMatchObject([
      { name: 'web/app.json', size: 7, md5 },
    ]);
    expect(await gcp.storage_delete(call, 'configs', 'web/app.json', connection)).toEqual({ changed: true });
    expect(await gcp.storage_delete(call, 'configs', 'web/app.json', connection)).toEqual({ changed: false });
    expect([...authorizations]).toEqual(['Bearer ya29.test-token']);
  }, 30_000);

  it('lists instances and starts or stops one only when its status needs it', async () => {
    const gcp = createGcpModule();
    const { call } = luaCallContext();
    expect(await gcp.compute_instances(call, 'europe-west1-b', connection)).toEqual([
      {
        name: 'web-1',
        id: '4242',
        status: 'TERMINATED',
        machine_type: 'e2-small',
        internal_ip: '10.128.0.2',
        labels: { role: 'web' },
      },
    ]);
    expect(await gcp.compute_stop(call, 'europe-west1-b', 'web-1', connection)).toEqual({
      changed: false,
      status: 'TERMINATED',
    });
    expect(
      await gcp.compute_start(luaCallContext({ dryRun: true }).call, 'europe-west1-b', 'web-1', connection),
    ).toMatchObject({ changed: true, dry_run: true });
    expect(await gcp.compute_start(call, 'europe-west1-b', 'web-1', connection)).toEqual({
      changed: true,
      operation: 'operation-start-1',
    });
    expect(await gcp.compute_start(call, 'europe-west1-b', 'web-1', connection)).toEqual({
      changed: false,
      status: 'STAGING',
    });
  }, 30_000);
});
