import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LuaValue } from '@runner/plugin-sdk';
import { luaCallContext } from '@runner/plugin-sdk/testing';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAwsModule, s3Etag } from './aws.js';

const dir = mkdtempSync(join(tmpdir(), 'runner-aws-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A real S3-compatible server (s3rver, from npm) on an ephemeral port, spoken to by the real SDK.
describe('aws S3 functions against s3rver', () => {
  let server: { close(): Promise<void> };
  let connection: Record<string, LuaValue>;
  beforeAll(async () => {
    const s3rver = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: join(dir, 's3') });
    const { port } = (await s3rver.run()) as AddressInfo;
    server = s3rver;
    connection = {
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      force_path_style: true,
      credentials: { access_key_id: 'S3RVER', secret_access_key: 'S3RVER' },
    };
  });
  afterAll(() => server.close());

  it('creates a bucket once, puts an object only when its content differs, reads, lists and deletes', async () => {
    const aws = createAwsModule();
    const { call } = luaCallContext();
    const dry = luaCallContext({ dryRun: true }).call;
    expect(await aws.s3_create_bucket(dry, 'artifacts', connection)).toMatchObject({ changed: true, dry_run: true });
    expect(await aws.s3_create_bucket(call, 'artifacts', connection)).toEqual({ changed: true });
    expect(await aws.s3_create_bucket(call, 'artifacts', connection)).toEqual({ changed: false });
    expect(await aws.s3_list_buckets(call, connection)).toMatchObject([{ name: 'artifacts' }]);

    expect(await aws.s3_put(dry, 'artifacts', 'app/v1.txt', 'hello', connection)).toMatchObject({
      changed: true,
      dry_run: true,
    });
    expect(await aws.s3_get(call, 'artifacts', 'app/v1.txt', connection)).toBeNull();
    expect(
      await aws.s3_put(call, 'artifacts', 'app/v1.txt', 'hello', { ...connection, content_type: 'text/plain' }),
    ).toEqual({ changed: true, etag: s3Etag(Buffer.from('hello')) });
    expect(await aws.s3_put(call, 'artifacts', 'app/v1.txt', 'hello', connection)).toMatchObject({ changed: false });
    expect(await aws.s3_get(call, 'artifacts', 'app/v1.txt', connection)).toBe('hello');

    const file = join(dir, 'build.tgz');
    writeFileSync(file, Buffer.from([0, 1, 2, 255]));
    expect(await aws.s3_upload(call, 'artifacts', 'app/build.tgz', file, connection)).toMatchObject({ changed: true });
    expect(await aws.s3_upload(call, 'artifacts', 'app/build.tgz', file, connection)).toMatchObject({ changed: false });
    const copy = join(dir, 'copy.tgz');
    expect(await aws.s3_download(call, 'artifacts', 'app/build.tgz', copy, connection)).toEqual({
      changed: true,
      path: copy,
    });
    expect(await aws.s3_download(call, 'artifacts', 'app/build.tgz', copy, connection)).toEqual({
      changed: false,
      path: copy,
    });
    expect(readFileSync(copy)).toEqual(Buffer.from([0, 1, 2, 255]));

    const listed = (await aws.s3_list(call, 'artifacts', { ...connection, prefix: 'app/' })) as {
      key: string;
      size: number;
    }[];
    expect(listed.map((o) => `${o.key}:${o.size}`).sort()).toEqual(['app/build.tgz:4', 'app/v1.txt:5']);

    expect(await aws.s3_delete(call, 'artifacts', 'app/v1.txt', connection)).toEqual({ changed: true });
    expect(await aws.s3_delete(call, 'artifacts', 'app/v1.txt', connection)).toEqual({ changed: false });
    await aws.s3_delete(call, 'artifacts', 'app/build.tgz', connection);
    expect(await aws.s3_delete_bucket(call, 'artifacts', connection)).toEqual({ changed: true });
    expect(await aws.s3_delete_bucket(call, 'artifacts', connection)).toEqual({ changed: false });
  }, 30_000);
});

/**
 * EC2 and SSM have no local stand-in on npm: a faked endpoint answers with responses recorded
 * from the services' documented wire formats (EC2's query/XML protocol, SSM's JSON 1.1), over
 * one instance and a parameter store kept in memory.
 */
describe('aws EC2 and SSM functions against a faked endpoint', () => {
  let server: Server;
  let connection: Record<string, LuaValue>;
  const requests: string[] = [];
  let state = 'stopped';
  const parameters = new Map<string, { Value: string; Type: string; Version: number }>();
  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const target = req.headers['x-amz-target'];
        if (typeof target === 'string') {
          requests.push(target);
          const input = JSON.parse(body) as { Name: string; Value?: string; Type?: string };
          const json = (status: number, value: unknown) =>
            res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(value));
          const current = parameters.get(input.Name);
          if (target.endsWith('.GetParameter')) {
            return current
              ? json(200, { Parameter: { Name: input.Name, ...current } })
              : json(400, { __type: 'ParameterNotFound', message: 'not found' });
          }
          if (target.endsWith('.PutParameter')) {
            const version = (current?.Version ?? 0) + 1;
            parameters.set(input.Name, { Value: input.Value!, Type: input.Type!, Version: version });
            return json(200, { Version: version, Tier: 'Standard' });
          }
          if (target.endsWith('.DeleteParameter')) {
            parameters.delete(input.Name);
            return json(200, {});
          }
          return json(400, { __type: 'InvalidAction', message: target });
        }
        const form = new URLSearchParams(body);
        const action = form.get('Action');
        requests.push(String(action));
        const xml = (text: string) =>
          res.writeHead(200, { 'content-type': 'text/xml' }).end(`<?xml version="1.0" encoding="UTF-8"?>\n${text}`);
        if (action === 'DescribeInstances') {
          return xml(
            `<DescribeInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>req-1</requestId><reservationSet><item><reservationId>r-1</reservationId><ownerId>123456789012</ownerId><instancesSet><item><instanceId>i-0abc</instanceId><imageId>ami-0def</imageId><instanceState><code>80</code><name>${state}</name></instanceState><instanceType>t3.micro</instanceType><privateIpAddress>10.0.0.5</privateIpAddress><tagSet><item><key>Name</key><value>web</value></item></tagSet></item></instancesSet></item></reservationSet></DescribeInstancesResponse>`,
          );
        }
        if (action === 'StartInstances' || action === 'StopInstances') {
          const previous = state;
          state = action === 'StartInstances' ? 'pending' : 'stopping';
          const tag = action.replace('Instances', 'InstancesResponse');
          return xml(
            `<${tag} xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>req-2</requestId><instancesSet><item><instanceId>i-0abc</instanceId><currentState><code>0</code><name>${state}</name></currentState><previousState><code>80</code><name>${previous}</name></previousState></item></instancesSet></${tag}>`,
          );
        }
        res.writeHead(400).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    connection = {
      endpoint: `http://127.0.0.1:${port}`,
      region: 'eu-west-1',
      credentials: { access_key_id: 'AKIDTEST', secret_access_key: 'not-a-real-secret' },
    };
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('lists instances and starts or stops them only when their state needs it', async () => {
    const aws = createAwsModule();
    const { call } = luaCallContext();
    expect(await aws.ec2_instances(call, connection)).toEqual([
      {
        id: 'i-0abc',
        state: 'stopped',
        type: 't3.micro',
        image: 'ami-0def',
        private_ip: '10.0.0.5',
        tags: { Name: 'web' },
      },
    ]);
    expect(await aws.ec2_stop(call, 'i-0abc', connection)).toEqual({ changed: false, instances: [] });
    expect(await aws.ec2_start(luaCallContext({ dryRun: true }).call, ['i-0abc'], connection)).toMatchObject({
      changed: true,
      dry_run: true,
    });
    expect(state).toBe('stopped');
    expect(await aws.ec2_start(call, ['i-0abc'], connection)).toEqual({ changed: true, instances: ['i-0abc'] });
    expect(await aws.ec2_start(call, ['i-0abc'], connection)).toEqual({ changed: false, instances: [] });
    expect(requests.filter((r) => r === 'StartInstances')).toHaveLength(1);
  });

  it('puts a parameter only when its value or type differs, reads and deletes it', async () => {
    const aws = createAwsModule();
    const { call } = luaCallContext();
    expect(await aws.ssm_get_parameter(call, '/app/db_password', connection)).toBeNull();
    const secure = { ...connection, type: 'SecureString' };
    expect(await aws.ssm_put_parameter(call, '/app/db_password', 'hunter2', secure)).toEqual({
      changed: true,
      version: 1,
    });
    expect(await aws.ssm_put_parameter(call, '/app/db_password', 'hunter2', secure)).toEqual({
      changed: false,
      version: 1,
    });
    expect(await aws.ssm_put_parameter(call, '/app/db_password', 'hunter3', secure)).toEqual({
      changed: true,
      version: 2,
    });
    expect(await aws.ssm_get_parameter(call, '/app/db_password', connection)).toBe('hunter3');
    expect(await aws.ssm_delete_parameter(call, '/app/db_password', connection)).toEqual({ changed: true });
    expect(await aws.ssm_delete_parameter(call, '/app/db_password', connection)).toEqual({ changed: false });
  });
});
