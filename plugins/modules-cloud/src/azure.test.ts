import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LuaValue } from '@runner/plugin-sdk';
import { luaCallContext, selfSignedCertificate } from '@runner/plugin-sdk/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobMd5, createAzureModule, powerState } from './azure.js';

it('reads the power state from an instance view', () => {
  expect(powerState([{ code: 'ProvisioningState/succeeded' }, { code: 'PowerState/deallocated' }])).toBe('deallocated');
  expect(powerState(undefined)).toBe('unknown');
});

/**
 * Azurite (Azure's storage emulator) needs Node 22 and nothing emulates Azure Resource Manager:
 * a faked endpoint, over HTTPS as the SDK's bearer-token policy demands, answers the official
 * SDKs' requests (the Blob service REST API with a shared key; ARM's virtual machine operations)
 * over blobs and one VM kept in memory.
 */
describe('azure module against a faked Blob service and Resource Manager', () => {
  const dir = mkdtempSync(join(tmpdir(), 'runner-azure-test-'));
  let server: Server;
  let base: string;
  const blobs = new Map<string, { body: Buffer; md5?: string }>();
  const containers = new Set<string>();
  const writes: string[] = [];
  const bearer = new Set<string | undefined>();
  let power = 'deallocated';
  beforeAll(async () => {
    const { cert, key } = selfSignedCertificate(dir, 'fake-azure');
    server = createServer({ cert: readFileSync(cert), key: readFileSync(key) }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'https://x');
        const body = Buffer.concat(chunks);
        const arm =
          /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft.Compute\/virtualMachines(?:\/([^/]+))?(?:\/(instanceView|start|deallocate))?$/.exec(
            url.pathname,
          );
        if (arm) {
          bearer.add(req.headers.authorization);
          const json = (value: unknown) =>
            res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
          if (!arm[3])
            return json({
              value: [
                {
                  name: 'web-1',
                  id: `${url.pathname}/web-1`,
                  location: 'westeurope',
                  properties: { hardwareProfile: { vmSize: 'Standard_B1s' } },
                  tags: { role: 'web' },
                },
              ],
            });
          if (arm[4] === 'instanceView')
            return json({ statuses: [{ code: 'ProvisioningState/succeeded' }, { code: `PowerState/${power}` }] });
          power = arm[4] === 'start' ? 'running' : 'deallocated';
          return res.writeHead(200).end();
        }
        // Blob service, path-style: /<account>/<container>[/<blob>]
        const [, , container, ...rest] = url.pathname.split('/');
        const name = decodeURIComponent(rest.join('/'));
        const notFound = (code: string) => res.writeHead(404, { 'x-ms-error-code': code }).end();
        if (!name) {
          if (url.searchParams.get('comp') === 'list') {
            const prefix = url.searchParams.get('prefix') ?? '';
            const items = [...blobs]
              .filter(([k]) => k.startsWith(`${container}/${prefix}`))
              .map(
                ([k, b]) =>
                  `<Blob><Name>${k.slice(container.length + 1)}</Name><Properties><Content-Length>${b.body.length}</Content-Length><Content-MD5>${b.md5 ?? ''}</Content-MD5><Last-Modified>Sat, 28 Nov 2026 06:00:00 GMT</Last-Modified><BlobType>BlockBlob</BlobType></Properties></Blob>`,
              );
            return res
              .writeHead(200, { 'content-type': 'application/xml' })
              .end(
                `<?xml version="1.0" encoding="utf-8"?><EnumerationResults><Blobs>${items.join('')}</Blobs><NextMarker/></EnumerationResults>`,
              );
          }
          if (req.method === 'PUT') {
            containers.add(container);
            return res.writeHead(201).end();
          }
          return containers.has(container) ? res.writeHead(200).end() : notFound('ContainerNotFound');
        }
        const key = `${container}/${name}`;
        const stored = blobs.get(key);
        if (req.method === 'PUT') {
          writes.push(key);
          blobs.set(key, { body, md5: req.headers['x-ms-blob-content-md5'] as string | undefined });
          return res.writeHead(201, { etag: '"0x1"', 'content-md5': blobMd5(body) }).end();
        }
        if (!stored) return notFound('BlobNotFound');
        if (req.method === 'DELETE') {
          blobs.delete(key);
          return res.writeHead(202).end();
        }
        const headers = {
          'content-length': String(stored.body.length),
          'x-ms-blob-type': 'BlockBlob',
          etag: '"0x1"',
          ...(stored.md5 ? { 'content-md5': stored.md5 } : {}),
        };
        res.writeHead(200, headers).end(req.method === 'HEAD' ? undefined : stored.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    storage = {
      account: 'devaccount',
      account_key: Buffer.from('not-a-real-key').toString('base64'),
      endpoint: `${base}/devaccount`,
      ca_file: cert,
    };
    arm = {
      subscription: '00000000-0000-0000-0000-000000000000',
      access_token: 'test-arm-token',
      endpoint: base,
      ca_file: cert,
    };
  });
  let storage: Record<string, LuaValue>;
  let arm: Record<string, LuaValue>;
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates a container once and writes a blob only when its content differs', async () => {
    const azure = createAzureModule();
    const { call } = luaCallContext();
    expect(await azure.container_create(call, 'configs', storage)).toEqual({ changed: true });
    expect(await azure.container_create(call, 'configs', storage)).toEqual({ changed: false });
    expect(
      await azure.blob_put(luaCallContext({ dryRun: true }).call, 'configs', 'web/app.json', '{"a":1}', storage),
    ).toMatchObject({ changed: true, dry_run: true });
    expect(blobs.size).toBe(0);
    const md5 = blobMd5(Buffer.from('{"a":1}'));
    expect(await azure.blob_put(call, 'configs', 'web/app.json', '{"a":1}', storage)).toEqual({ changed: true, md5 });
    expect(await azure.blob_put(call, 'configs', 'web/app.json', '{"a":1}', storage)).toEqual({ changed: false, md5 });
    expect(writes).toEqual(['configs/web/app.json']);
    expect(await azure.blob_get(call, 'configs', 'web/app.json', storage)).toBe('{"a":1}');
    expect(await azure.blob_get(call, 'configs', 'web/none.json', storage)).toBeNull();
    expect(await azure.blob_list(call, 'configs', { ...storage, prefix: 'web/' })).toMatchObject([
      { name: 'web/app.json', size: 7, md5 },
    ]);
    expect(await azure.blob_delete(call, 'configs', 'web/app.json', storage)).toEqual({ changed: true });
    expect(await azure.blob_delete(call, 'configs', 'web/app.json', storage)).toEqual({ changed: false });
  }, 30_000);

  it('lists VMs and starts or deallocates one only when its power state needs it', async () => {
    const azure = createAzureModule();
    const { call } = luaCallContext();
    expect(await azure.vm_list(call, 'web-rg', arm)).toEqual([
      {
        name: 'web-1',
        id: '/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/web-rg/providers/Microsoft.Compute/virtualMachines/web-1',
        location: 'westeurope',
        size: 'Standard_B1s',
        tags: { role: 'web' },
      },
    ]);
    expect(await azure.vm_stop(call, 'web-rg', 'web-1', arm)).toEqual({ changed: false, power_state: 'deallocated' });
    expect(await azure.vm_start(luaCallContext({ dryRun: true }).call, 'web-rg', 'web-1', arm)).toMatchObject({
      changed: true,
      dry_run: true,
    });
    expect(power).toBe('deallocated');
    expect(await azure.vm_start(call, 'web-rg', 'web-1', arm)).toEqual({ changed: true, power_state: 'running' });
    expect(await azure.vm_start(call, 'web-rg', 'web-1', arm)).toEqual({ changed: false, power_state: 'running' });
    expect(await azure.vm_state(call, 'web-rg', 'web-1', arm)).toBe('running');
    expect([...bearer]).toEqual(['Bearer test-arm-token']);
  }, 30_000);
});
