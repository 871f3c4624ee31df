import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { S3Client } from '@aws-sdk/client-s3';
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { SSMClient } from '@aws-sdk/client-ssm';
import {
  InvalidInputError,
  luaOptionalBoolean,
  luaOptionalNumber,
  luaOptionalString,
  luaString,
  luaStringList,
  luaStringMap,
  readLuaOptions,
  RunnerError,
  toLuaValue,
  type LuaCallContext,
  type LuaModuleImplementation,
  type LuaValue,
} from '@runner/plugin-sdk';
import { awsModule } from './aws-spec.js';
import { objectWriters } from './object-writes.js';

/** Where and as whom: what every function's opts may carry besides its own options. */
const CONNECTION = ['region', 'endpoint', 'credentials', 'force_path_style'] as const;

/** The settings a client is made from; clients are kept per distinct settings. */
interface ClientSettings {
  region?: string;
  endpoint?: string;
  forcePathStyle?: boolean;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

function clientSettings(fn: string, o: Record<string, LuaValue>): ClientSettings {
  const settings: ClientSettings = {
    region: luaOptionalString(fn, 'option region', o.region),
    endpoint: luaOptionalString(fn, 'option endpoint', o.endpoint),
    forcePathStyle: luaOptionalBoolean(fn, 'option force_path_style', o.force_path_style),
  };
  if (o.credentials !== undefined && o.credentials !== null) {
    const c = luaStringMap(fn, 'option credentials', o.credentials);
    if (!c.access_key_id || !c.secret_access_key) {
      throw new InvalidInputError(`${fn}: option credentials needs access_key_id and secret_access_key`);
    }
    settings.credentials = {
      accessKeyId: c.access_key_id,
      secretAccessKey: c.secret_access_key,
      sessionToken: c.session_token,
    };
  }
  return settings;
}

/** An SDK error in the script's terms; the SDK's messages hold no credentials. */
function awsError(fn: string, what: string, error: unknown): RunnerError {
  const e = error as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  return new RunnerError(
    'failed',
    `${fn}: ${what}: ${e.name && e.name !== 'Error' ? `${e.name}: ` : ''}${e.message ?? String(error)}`,
    {
      details: e.$metadata?.httpStatusCode ? { status: e.$metadata.httpStatusCode } : undefined,
    },
  );
}

const isMissing = (error: unknown): boolean => {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return (
    e.$metadata?.httpStatusCode === 404 ||
    e.name === 'NotFound' ||
    e.name === 'NoSuchKey' ||
    e.name === 'NoSuchBucket' ||
    e.name === 'ParameterNotFound'
  );
};

/** The ETag S3 gives a single-part upload: the MD5 of the body, in quotes. */
export const s3Etag = (body: Buffer): string => `"${createHash('md5').update(body).digest('hex')}"`;

/** EC2 states from which `start` or `stop` has nothing to do. */
const ALREADY = { start: ['pending', 'running'], stop: ['stopping', 'stopped'] } as const;

export function createAwsModule(): LuaModuleImplementation<keyof typeof awsModule.functions> {
  const clients = new Map<string, unknown>();
  /** One client per service and settings: connections and resolved credentials are reused. */
  async function client<T>(service: 's3' | 'ec2' | 'ssm', settings: ClientSettings): Promise<T> {
    const key = `${service}:${createHash('sha256').update(JSON.stringify(settings)).digest('hex')}`;
    let made = clients.get(key);
    if (!made) {
      const config = Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined));
      // Loaded on first use: the SDK is large, and most runs never touch AWS.
      if (service === 's3') made = new (await import('@aws-sdk/client-s3')).S3Client(config);
      else if (service === 'ec2') made = new (await import('@aws-sdk/client-ec2')).EC2Client(config);
      else made = new (await import('@aws-sdk/client-ssm')).SSMClient(config);
      clients.set(key, made);
    }
    return made as T;
  }
  const s3 = async (fn: string, o: Record<string, LuaValue>) => ({
    client: await client<S3Client>('s3', clientSettings(fn, o)),
    sdk: await import('@aws-sdk/client-s3'),
  });
  const abort = (call: LuaCallContext) => ({ abortSignal: call.signal });

  async function headObject(
    fn: string,
    o: Record<string, LuaValue>,
    bucket: string,
    key: string,
    call: LuaCallContext,
  ) {
    const { client: c, sdk } = await s3(fn, o);
    try {
      return await c.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: key }), abort(call));
    } catch (error) {
      if (isMissing(error)) return null;
      throw awsError(fn, `head s3://${bucket}/${key}`, error);
    }
  }

  /** Puts body at bucket/key unless the object there has that content (same MD5 ETag). */
  async function putIfChanged(
    call: LuaCallContext,
    fn: string,
    o: Record<string, LuaValue>,
    bucket: string,
    key: string,
    body: Buffer,
  ) {
    const head = await headObject(fn, o, bucket, key, call);
    const etag = s3Etag(body);
    if (head?.ETag === etag) return { changed: false, etag };
    if (call.dryRun)
      return { changed: true, dry_run: true, note: `dry-run: would put s3://${bucket}/${key} (${body.length} bytes)` };
    const { client: c, sdk } = await s3(fn, o);
    try {
      const put = await c.send(
        new sdk.PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: body,
          ContentType: luaOptionalString(fn, 'option content_type', o.content_type),
          Metadata: o.metadata === undefined ? undefined : luaStringMap(fn, 'option metadata', o.metadata),
        }),
        abort(call),
      );
      return { changed: true, etag: put.ETag ?? etag };
    } catch (error) {
      throw awsError(fn, `put s3://${bucket}/${key}`, error);
    }
  }

  async function getObject(
    call: LuaCallContext,
    fn: string,
    o: Record<string, LuaValue>,
    bucket: string,
    key: string,
  ): Promise<Buffer | null> {
    const { client: c, sdk } = await s3(fn, o);
    try {
      const got = await c.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: key }), abort(call));
      return Buffer.from(await got.Body!.transformToByteArray());
    } catch (error) {
      if (isMissing(error)) return null;
      throw awsError(fn, `get s3://${bucket}/${key}`, error);
    }
  }

  async function instances(
    call: LuaCallContext,
    fn: string,
    o: Record<string, LuaValue>,
    ids: string[],
    filters: Record<string, string>,
  ) {
    const c = await client<EC2Client>('ec2', clientSettings(fn, o));
    const { DescribeInstancesCommand } = await import('@aws-sdk/client-ec2');
    try {
      const found: Record<string, unknown>[] = [];
      let token: string | undefined;
      do {
        const page = await c.send(
          new DescribeInstancesCommand({
            InstanceIds: ids.length > 0 ? ids : undefined,
            Filters: Object.entries(filters).map(([Name, value]) => ({ Name, Values: value.split(',') })),
            NextToken: token,
          }),
          abort(call),
        );
        for (const reservation of page.Reservations ?? []) {
          for (const i of reservation.Instances ?? []) {
            found.push({
              id: i.InstanceId,
              state: i.State?.Name,
              type: i.InstanceType,
              image: i.ImageId,
              private_ip: i.PrivateIpAddress,
              public_ip: i.PublicIpAddress,
              launched: i.LaunchTime,
              tags: Object.fromEntries((i.Tags ?? []).map((t) => [t.Key, t.Value])),
            });
          }
        }
        token = page.NextToken;
      } while (token);
      return found;
    } catch (error) {
      throw awsError(fn, 'describe instances', error);
    }
  }

  async function startOrStop(
    call: LuaCallContext,
    verb: 'start' | 'stop',
    idsArg: LuaValue,
    opts: LuaValue,
  ): Promise<LuaValue> {
    const fn = `aws.ec2_${verb}`;
    const ids = luaStringList(fn, 'argument 1 (instance ids)', idsArg);
    if (ids.length === 0) throw new InvalidInputError(`${fn}: argument 1 must name at least one instance`);
    const o = readLuaOptions(fn, 2, opts, CONNECTION);
    const current = await instances(call, fn, o, ids, {});
    const todo = current
      .filter((i) => !(ALREADY[verb] as readonly string[]).includes(String(i.state)))
      .map((i) => String(i.id));
    if (todo.length === 0) return { changed: false, instances: [] };
    if (call.dryRun)
      return { changed: true, dry_run: true, instances: todo, note: `dry-run: would ${verb} ${todo.join(', ')}` };
    const c = await client<EC2Client>('ec2', clientSettings(fn, o));
    const sdk = await import('@aws-sdk/client-ec2');
    try {
      await c.send(
        verb === 'start'
          ? new sdk.StartInstancesCommand({ InstanceIds: todo })
          : new sdk.StopInstancesCommand({ InstanceIds: todo }),
        abort(call),
      );
    } catch (error) {
      throw awsError(fn, `${verb} ${todo.join(', ')}`, error);
    }
    return { changed: true, instances: todo };
  }

  async function ssmParameter(call: LuaCallContext, fn: string, o: Record<string, LuaValue>, name: string) {
    const c = await client<SSMClient>('ssm', clientSettings(fn, o));
    const { GetParameterCommand } = await import('@aws-sdk/client-ssm');
    try {
      return (
        (await c.send(new GetParameterCommand({ Name: name, WithDecryption: true }), abort(call))).Parameter ?? null
      );
    } catch (error) {
      if (isMissing(error)) return null;
      throw awsError(fn, `get parameter ${name}`, error);
    }
  }

  const writers = objectWriters(
    { put: 'aws.s3_put', upload: 'aws.s3_upload' },
    ['bucket', 'key'],
    [...CONNECTION, 'content_type', 'metadata'],
    putIfChanged,
  );

  return {
    s3_put: writers.put,
    s3_upload: writers.upload,
    s3_list_buckets: async (call, opts) => {
      const fn = 'aws.s3_list_buckets';
      const o = readLuaOptions(fn, 1, opts, CONNECTION);
      const { client: c, sdk } = await s3(fn, o);
      try {
        const listed = await c.send(new sdk.ListBucketsCommand({}), abort(call));
        return toLuaValue((listed.Buckets ?? []).map((b) => ({ name: b.Name, created: b.CreationDate })));
      } catch (error) {
        throw awsError(fn, 'list buckets', error);
      }
    },
    s3_create_bucket: async (call, bucketArg, opts) => {
      const fn = 'aws.s3_create_bucket';
      const bucket = luaString(fn, 'argument 1 (bucket)', bucketArg);
      const o = readLuaOptions(fn, 2, opts, CONNECTION);
      const { client: c, sdk } = await s3(fn, o);
      try {
        await c.send(new sdk.HeadBucketCommand({ Bucket: bucket }), abort(call));
        return { changed: false };
      } catch (error) {
        if (!isMissing(error)) throw awsError(fn, `head bucket ${bucket}`, error);
      }
      if (call.dryRun) return { changed: true, dry_run: true, note: `dry-run: would create bucket ${bucket}` };
      try {
        const region = await c.config.region();
        // us-east-1 takes no location constraint; every other region needs its own.
        const location =
          region && region !== 'us-east-1'
            ? { CreateBucketConfiguration: { LocationConstraint: region as never } }
            : {};
        await c.send(new sdk.CreateBucketCommand({ Bucket: bucket, ...location }), abort(call));
        return { changed: true };
      } catch (error) {
        throw awsError(fn, `create bucket ${bucket}`, error);
      }
    },
    s3_delete_bucket: async (call, bucketArg, opts) => {
      const fn = 'aws.s3_delete_bucket';
      const bucket = luaString(fn, 'argument 1 (bucket)', bucketArg);
      const o = readLuaOptions(fn, 2, opts, CONNECTION);
      const { client: c, sdk } = await s3(fn, o);
      try {
        await c.send(new sdk.HeadBucketCommand({ Bucket: bucket }), abort(call));
      } catch (error) {
        if (isMissing(error)) return { changed: false };
        throw awsError(fn, `head bucket ${bucket}`, error);
      }
      if (call.dryRun) return { changed: true, dry_run: true, note: `dry-run: would delete bucket ${bucket}` };
      try {
        await c.send(new sdk.DeleteBucketCommand({ Bucket: bucket }), abort(call));
        return { changed: true };
      } catch (error) {
        throw awsError(fn, `delete bucket ${bucket}`, error);
      }
    },
    s3_get: async (call, bucket, key, opts) => {
      const fn = 'aws.s3_get';
      const body = await getObject(
        call,
        fn,
        readLuaOptions(fn, 3, opts, CONNECTION),
        luaString(fn, 'argument 1 (bucket)', bucket),
        luaString(fn, 'argument 2 (key)', key),
      );
      return body === null ? null : body.toString('utf8');
    },
    s3_download: async (call, bucketArg, keyArg, pathArg, opts) => {
      const fn = 'aws.s3_download';
      const bucket = luaString(fn, 'argument 1 (bucket)', bucketArg);
      const key = luaString(fn, 'argument 2 (key)', keyArg);
      const path = luaString(fn, 'argument 3 (path)', pathArg);
      const o = readLuaOptions(fn, 4, opts, CONNECTION);
      const body = await getObject(call, fn, o, bucket, key);
      if (body === null) throw new InvalidInputError(`${fn}: s3://${bucket}/${key} does not exist`);
      if (existsSync(path) && readFileSync(path).equals(body)) return { changed: false, path };
      if (call.dryRun)
        return { changed: true, dry_run: true, path, note: `dry-run: would write ${path} (${body.length} bytes)` };
      writeFileSync(path, body);
      return { changed: true, path };
    },
    s3_delete: async (call, bucketArg, keyArg, opts) => {
      const fn = 'aws.s3_delete';
      const bucket = luaString(fn, 'argument 1 (bucket)', bucketArg);
      const key = luaString(fn, 'argument 2 (key)', keyArg);
      const o = readLuaOptions(fn, 3, opts, CONNECTION);
      if ((await headObject(fn, o, bucket, key, call)) === null) return { changed: false };
      if (call.dryRun) return { changed: true, dry_run: true, note: `dry-run: would delete s3://${bucket}/${key}` };
      const { client: c, sdk } = await s3(fn, o);
      try {
        await c.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: key }), abort(call));
        return { changed: true };
      } catch (error) {
        throw awsError(fn, `delete s3://${bucket}/${key}`, error);
      }
    },
    s3_list: async (call, bucketArg, opts) => {
      const fn = 'aws.s3_list';
      const bucket = luaString(fn, 'argument 1 (bucket)', bucketArg);
      const o = readLuaOptions(fn, 2, opts, [...CONNECTION, 'prefix', 'max']);
      const max = luaOptionalNumber(fn, 'option max', o.max) ?? 1000;
      const { client: c, sdk } = await s3(fn, o);
      const objects: Record<string, unknown>[] = [];
      let token: string | undefined;
      try {
        do {
          const page = await c.send(
            new sdk.ListObjectsV2Command({
              Bucket: bucket,
              Prefix: luaOptionalString(fn, 'option prefix', o.prefix),
              ContinuationToken: token,
              MaxKeys: Math.min(1000, max - objects.length),
            }),
            abort(call),
          );
          for (const item of page.Contents ?? [])
            objects.push({ key: item.Key, size: item.Size, etag: item.ETag, last_modified: item.LastModified });
          token = page.IsTruncated ? page.NextContinuationToken : undefined;
        } while (token && objects.length < max);
      } catch (error) {
        throw awsError(fn, `list s3://${bucket}`, error);
      }
      return toLuaValue(objects);
    },
    ec2_instances: async (call, opts) => {
      const fn = 'aws.ec2_instances';
      const o = readLuaOptions(fn, 1, opts, [...CONNECTION, 'ids', 'filters']);
      return toLuaValue(
        await instances(
          call,
          fn,
          o,
          luaStringList(fn, 'option ids', o.ids),
          luaStringMap(fn, 'option filters', o.filters),
        ),
      );
    },
    ec2_start: (call, ids, opts) => startOrStop(call, 'start', ids, opts),
    ec2_stop: (call, ids, opts) => startOrStop(call, 'stop', ids, opts),
    ssm_get_parameter: async (call, nameArg, opts) => {
      const fn = 'aws.ssm_get_parameter';
      const parameter = await ssmParameter(
        call,
        fn,
        readLuaOptions(fn, 2, opts, CONNECTION),
        luaString(fn, 'argument 1 (name)', nameArg),
      );
      return parameter?.Value ?? null;
    },
    ssm_put_parameter: async (call, nameArg, valueArg, opts) => {
      const fn = 'aws.ssm_put_parameter';
      const name = luaString(fn, 'argument 1 (name)', nameArg);
      if (typeof valueArg !== 'string') throw new InvalidInputError(`${fn}: argument 2 (value) must be a string`);
      const o = readLuaOptions(fn, 3, opts, [...CONNECTION, 'type', 'description']);
      const type = luaOptionalString(fn, 'option type', o.type) ?? 'String';
      if (!['String', 'StringList', 'SecureString'].includes(type))
        throw new InvalidInputError(`${fn}: option type must be String, StringList or SecureString`);
      const current = await ssmParameter(call, fn, o, name);
      if (current?.Value === valueArg && current.Type === type)
        return { changed: false, version: current.Version ?? null };
      if (call.dryRun)
        return {
          changed: true,
          dry_run: true,
          note: `dry-run: would ${current ? 'update' : 'create'} parameter ${name}`,
        };
      const c = await client<SSMClient>('ssm', clientSettings(fn, o));
      const { PutParameterCommand } = await import('@aws-sdk/client-ssm');
      try {
        const put = await c.send(
          new PutParameterCommand({
            Name: name,
            Value: valueArg,
            Type: type as 'String',
            Overwrite: current !== null,
            Description: luaOptionalString(fn, 'option description', o.description),
          }),
          abort(call),
        );
        return { changed: true, version: put.Version ?? null };
      } catch (error) {
        throw awsError(fn, `put parameter ${name}`, error);
      }
    },
    ssm_delete_parameter: async (call, nameArg, opts) => {
      const fn = 'aws.ssm_delete_parameter';
      const name = luaString(fn, 'argument 1 (name)', nameArg);
      const o = readLuaOptions(fn, 2, opts, CONNECTION);
      if ((await ssmParameter(call, fn, o, name)) === null) return { changed: false };
      if (call.dryRun) return { changed: true, dry_run: true, note: `dry-run: would delete parameter ${name}` };
      const c = await client<SSMClient>('ssm', clientSettings(fn, o));
      const { DeleteParameterCommand } = await import('@aws-sdk/client-ssm');
      try {
        await c.send(new DeleteParameterCommand({ Name: name }), abort(call));
        return { changed: true };
      } catch (error) {
        if (isMissing(error)) return { changed: false };
        throw awsError(fn, `delete parameter ${name}`, error);
      }
    },
  };
}
