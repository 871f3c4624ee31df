import { createHash } from 'node:crypto';
import type { InstancesClient } from '@google-cloud/compute/build/src/v1/instances_client.js';
import type { Storage } from '@google-cloud/storage';
import {
  InvalidInputError,
  luaOptionalNumber,
  luaOptionalString,
  luaString,
  readLuaOptions,
  RunnerError,
  toLuaValue,
  type LuaCallContext,
  type LuaModuleImplementation,
  type LuaValue,
} from '@runner/plugin-sdk';
import { gcpModule } from './gcp-spec.js';
import { objectWriters } from './object-writes.js';

/** Which project, as whom, and (for emulators and tests) where. */
const CONNECTION = ['project', 'access_token', 'credentials', 'endpoint'] as const;

interface Connection {
  project?: string;
  /** An OAuth access token (from `gcloud auth print-access-token` or a secret). */
  accessToken?: string;
  /** A service account key, as its JSON file holds it. */
  credentials?: Record<string, unknown>;
  /** `http://127.0.0.1:4443`: an emulator or a test's server. */
  endpoint?: string;
}

function connection(fn: string, o: Record<string, LuaValue>): Connection {
  const credentials = o.credentials;
  if (
    credentials !== undefined &&
    credentials !== null &&
    (typeof credentials !== 'object' || Array.isArray(credentials))
  ) {
    throw new InvalidInputError(`${fn}: option credentials must be a service account key (a table of its JSON)`);
  }
  return {
    project: luaOptionalString(fn, 'option project', o.project),
    accessToken: luaOptionalString(fn, 'option access_token', o.access_token),
    credentials: (credentials ?? undefined) as Record<string, unknown> | undefined,
    endpoint: luaOptionalString(fn, 'option endpoint', o.endpoint),
  };
}

type AuthLibrary = Pick<typeof import('google-auth-library'), 'GoogleAuth' | 'OAuth2Client'>;

/**
 * The auth client the SDKs take: a token, a key, or else Application Default Credentials. Made
 * from the auth library the SDK itself is built on (Cloud Storage's v9, google-gax's v10 for
 * Compute Engine), as each calls methods the other version lacks.
 */
function authClient(c: Connection, { GoogleAuth, OAuth2Client }: AuthLibrary): unknown {
  if (c.accessToken) {
    const client = new OAuth2Client();
    client.setCredentials({ access_token: c.accessToken, expiry_date: Date.now() + 3600_000 });
    return client;
  }
  return new GoogleAuth({
    credentials: c.credentials as never,
    projectId: c.project,
    scopes: ['https://www.googleapis.com/auth/cloud-platform'],
  });
}

function gcpError(fn: string, what: string, error: unknown): RunnerError {
  const e = error as { code?: number; message?: string };
  return new RunnerError('failed', `${fn}: ${what}: ${e.message ?? String(error)}`, {
    details: typeof e.code === 'number' ? { status: e.code } : undefined,
  });
}

const isMissing = (error: unknown): boolean => (error as { code?: number }).code === 404;

/** The base64 MD5 Cloud Storage reports as an object's md5Hash. */
export const gcsMd5 = (body: Buffer): string => createHash('md5').update(body).digest('base64');

/** Instance states in which `start` or `stop` has nothing to do. */
const ALREADY = {
  start: ['PROVISIONING', 'STAGING', 'RUNNING'],
  stop: ['STOPPING', 'STOPPED', 'TERMINATED', 'SUSPENDED'],
} as const;

export function createGcpModule(): LuaModuleImplementation<keyof typeof gcpModule.functions> {
  const clients = new Map<string, Promise<unknown>>();
  /**
   * One client per kind and connection: Compute Engine's client reads its API description (many
   * megabytes) when made, and both keep their connections and tokens.
   */
  function cached<T>(kind: string, c: Connection, make: () => Promise<T>): Promise<T> {
    const key = `${kind}:${createHash('sha256').update(JSON.stringify(c)).digest('hex')}`;
    let made = clients.get(key);
    if (!made) {
      made = make();
      clients.set(key, made);
      made.catch(() => clients.delete(key));
    }
    return made as Promise<T>;
  }
  const storage = (c: Connection) => cached('storage', c, () => makeStorage(c));
  const instances = (c: Connection) => cached('compute', c, () => makeInstances(c));

  async function makeStorage(c: Connection): Promise<Storage> {
    const { Storage } = await import('@google-cloud/storage');
    return new Storage({
      projectId: c.project,
      authClient: authClient(c, await import('google-auth-library')) as never,
      ...(c.endpoint ? { apiEndpoint: c.endpoint, useAuthWithCustomEndpoint: true } : {}),
    });
  }
  async function makeInstances(c: Connection): Promise<InstancesClient> {
    // The one client, not the package's index: that loads all hundred Compute Engine clients (9 s).
    const [{ InstancesClient }, { googleAuthLibrary }] = await Promise.all([
      import('@google-cloud/compute/build/src/v1/instances_client.js'),
      import('google-gax'),
    ]);
    const endpoint = c.endpoint ? new URL(c.endpoint) : undefined;
    // REST (fallback) rather than gRPC: one HTTP/JSON transport for the API and for tests.
    return new InstancesClient({
      fallback: true,
      authClient: authClient(c, googleAuthLibrary as unknown as AuthLibrary) as never,
      ...(endpoint
        ? { apiEndpoint: endpoint.hostname, port: Number(endpoint.port), protocol: endpoint.protocol.replace(':', '') }
        : {}),
    } as never);
  }
  const project = (fn: string, c: Connection): string => {
    const id = c.project ?? process.env.GOOGLE_CLOUD_PROJECT ?? process.env.CLOUDSDK_CORE_PROJECT;
    if (!id)
      throw new InvalidInputError(
        `${fn}: option project is required (or GOOGLE_CLOUD_PROJECT in the runner's environment)`,
      );
    return id;
  };

  async function put(
    call: LuaCallContext,
    fn: string,
    o: Record<string, LuaValue>,
    bucket: string,
    name: string,
    body: Buffer,
  ) {
    const file = (await storage(connection(fn, o))).bucket(bucket).file(name);
    const md5 = gcsMd5(body);
    let current: string | undefined;
    try {
      current = (await file.getMetadata())[0].md5Hash;
    } catch (error) {
      if (!isMissing(error)) throw gcpError(fn, `gs://${bucket}/${name}`, error);
    }
    if (current === md5) return { changed: false, md5 };
    if (call.dryRun)
      return {
        changed: true,
        dry_run: true,
        note: `dry-run: would write gs://${bucket}/${name} (${body.length} bytes)`,
      };
    try {
      await file.save(body, {
        resumable: false,
        validation: 'md5',
        contentType: luaOptionalString(fn, 'option content_type', o.content_type),
      });
    } catch (error) {
      throw gcpError(fn, `write gs://${bucket}/${name}`, error);
    }
    return { changed: true, md5 };
  }

  async function startOrStop(
    call: LuaCallContext,
    verb: 'start' | 'stop',
    zoneArg: LuaValue,
    nameArg: LuaValue,
    opts: LuaValue,
  ): Promise<LuaValue> {
    const fn = `gcp.compute_${verb}`;
    const zone = luaString(fn, 'argument 1 (zone)', zoneArg);
    const instance = luaString(fn, 'argument 2 (instance)', nameArg);
    const c = connection(fn, readLuaOptions(fn, 3, opts, CONNECTION));
    const client = await instances(c);
    const request = { project: project(fn, c), zone, instance };
    try {
      const [current] = await client.get(request);
      if ((ALREADY[verb] as readonly string[]).includes(String(current.status)))
        return { changed: false, status: current.status ?? null };
      if (call.dryRun)
        return {
          changed: true,
          dry_run: true,
          status: current.status ?? null,
          note: `dry-run: would ${verb} ${instance}`,
        };
      const [operation] = verb === 'start' ? await client.start(request) : await client.stop(request);
      // The operation is not waited for: Compute Engine has accepted the request, as gcloud --async.
      const accepted = (operation as { latestResponse?: { name?: string } }).latestResponse;
      return { changed: true, operation: accepted?.name ?? null };
    } catch (error) {
      throw gcpError(fn, `${verb} ${instance}`, error);
    }
  }

  const writers = objectWriters(
    { put: 'gcp.storage_put', upload: 'gcp.storage_upload' },
    ['bucket', 'name'],
    [...CONNECTION, 'content_type'],
    put,
  );

  return {
    storage_put: writers.put,
    storage_upload: writers.upload,
    storage_get: async (_call, bucketArg, nameArg, opts) => {
      const fn = 'gcp.storage_get';
      const bucket = luaString(fn, 'argument 1 (bucket)', bucketArg);
      const name = luaString(fn, 'argument 2 (name)', nameArg);
      const client = await storage(connection(fn, readLuaOptions(fn, 3, opts, CONNECTION)));
      try {
        return (await client.bucket(bucket).file(name).download({ validation: false }))[0].toString('utf8');
      } catch (error) {
        if (isMissing(error)) return null;
        throw gcpError(fn, `read gs://${bucket}/${name}`, error);
      }
    },
    storage_delete: async (call, bucketArg, nameArg, opts) => {
      const fn = 'gcp.storage_delete';
      const bucket = luaString(fn, 'argument 1 (bucket)', bucketArg);
      const name = luaString(fn, 'argument 2 (name)', nameArg);
      const file = (await storage(connection(fn, readLuaOptions(fn, 3, opts, CONNECTION)))).bucket(bucket).file(name);
      try {
        if (!(await file.exists())[0]) return { changed: false };
        if (call.dryRun) return { changed: true, dry_run: true, note: `dry-run: would delete gs://${bucket}/${name}` };
        await file.delete();
        return { changed: true };
      } catch (error) {
        if (isMissing(error)) return { changed: false };
        throw gcpError(fn, `delete gs://${bucket}/${name}`, error);
      }
    },
    storage_list: async (_call, bucketArg, opts) => {
      const fn = 'gcp.storage_list';
      const bucket = luaString(fn, 'argument 1 (bucket)', bucketArg);
      const o = readLuaOptions(fn, 2, opts, [...CONNECTION, 'prefix', 'max']);
      const client = await storage(connection(fn, o));
      try {
        const [files] = await client.bucket(bucket).getFiles({
          prefix: luaOptionalString(fn, 'option prefix', o.prefix),
          maxResults: luaOptionalNumber(fn, 'option max', o.max) ?? 1000,
          autoPaginate: true,
        });
        return toLuaValue(
          files.map((f) => ({
            name: f.name,
            size: Number(f.metadata.size ?? 0),
            md5: f.metadata.md5Hash,
            updated: f.metadata.updated,
          })),
        );
      } catch (error) {
        throw gcpError(fn, `list gs://${bucket}`, error);
      }
    },
    compute_instances: async (_call, zoneArg, opts) => {
      const fn = 'gcp.compute_instances';
      const zone = luaString(fn, 'argument 1 (zone)', zoneArg);
      const o = readLuaOptions(fn, 2, opts, [...CONNECTION, 'filter']);
      const c = connection(fn, o);
      const client = await instances(c);
      try {
        const [found] = await client.list({
          project: project(fn, c),
          zone,
          filter: luaOptionalString(fn, 'option filter', o.filter),
        });
        return toLuaValue(
          found.map((i) => ({
            name: i.name,
            id: i.id,
            status: i.status,
            machine_type: i.machineType?.split('/').pop(),
            internal_ip: i.networkInterfaces?.[0]?.networkIP,
            external_ip: i.networkInterfaces?.[0]?.accessConfigs?.[0]?.natIP,
            labels: i.labels ?? {},
          })),
        );
      } catch (error) {
        throw gcpError(fn, `list instances in ${zone}`, error);
      }
    },
    compute_start: (call, zone, name, opts) => startOrStop(call, 'start', zone, name, opts),
    compute_stop: (call, zone, name, opts) => startOrStop(call, 'stop', zone, name, opts),
  };
}
