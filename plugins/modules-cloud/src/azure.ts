import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { ComputeManagementClient } from '@azure/arm-compute';
import type { TokenCredential } from '@azure/identity';
import type { BlobServiceClient, StoragePipelineOptions } from '@azure/storage-blob';
import {
  InvalidInputError,
  luaOptionalString,
  luaString,
  readLuaOptions,
  RunnerError,
  toLuaValue,
  type LuaCallContext,
  type LuaModuleImplementation,
  type LuaValue,
} from '@runner/plugin-sdk';
import { azureModule } from './azure-spec.js';
import { objectWriters } from './object-writes.js';

/** Storage: which account and how; every option may come from a stack's secrets. */
const STORAGE = [
  'connection_string',
  'account',
  'account_key',
  'sas',
  'endpoint',
  'ca_file',
  'access_token',
  'tenant_id',
  'client_id',
  'client_secret',
] as const;
/** Compute: which subscription and as whom (a service principal, a token, or the default chain). */
const ARM = ['subscription', 'access_token', 'tenant_id', 'client_id', 'client_secret', 'endpoint', 'ca_file'] as const;

function azureError(fn: string, what: string, error: unknown): RunnerError {
  const e = error as { statusCode?: number; code?: string; message?: string };
  return new RunnerError(
    'failed',
    `${fn}: ${what}: ${e.code ? `${e.code}: ` : ''}${(e.message ?? String(error)).split('\n')[0]}`,
    {
      details: e.statusCode ? { status: e.statusCode } : undefined,
    },
  );
}

/** The base64 MD5 Azure keeps as a blob's Content-MD5 (set on upload here, so it is always there). */
export const blobMd5 = (body: Buffer): string => createHash('md5').update(body).digest('base64');

/** A VM's power state from its instance view: `running`, `deallocated`, `stopped`, `starting`... */
export function powerState(statuses: readonly { code?: string }[] | undefined): string {
  const code = (statuses ?? []).map((s) => s.code ?? '').find((c) => c.startsWith('PowerState/'));
  return code ? code.slice('PowerState/'.length) : 'unknown';
}

/** Power states in which start, or stop (deallocate), has nothing to do. */
const ALREADY = {
  start: ['starting', 'running'],
  stop: ['deallocating', 'deallocated', 'stopping', 'stopped'],
} as const;

export function createAzureModule(): LuaModuleImplementation<keyof typeof azureModule.functions> {
  const tls = (fn: string, o: Record<string, LuaValue>) => {
    const caFile = luaOptionalString(fn, 'option ca_file', o.ca_file);
    if (caFile && !existsSync(caFile)) throw new InvalidInputError(`${fn}: option ca_file: ${caFile} does not exist`);
    return caFile ? { tlsOptions: { ca: readFileSync(caFile, 'utf8') } } : {};
  };

  /** A token credential: a static token, a service principal's secret, or DefaultAzureCredential. */
  async function credential(fn: string, o: Record<string, LuaValue>): Promise<TokenCredential> {
    const token = luaOptionalString(fn, 'option access_token', o.access_token);
    if (token) return { getToken: async () => ({ token, expiresOnTimestamp: Date.now() + 3600_000 }) };
    const identity = await import('@azure/identity');
    const tenant = luaOptionalString(fn, 'option tenant_id', o.tenant_id);
    const client = luaOptionalString(fn, 'option client_id', o.client_id);
    const secret = luaOptionalString(fn, 'option client_secret', o.client_secret);
    if (tenant && client && secret) return new identity.ClientSecretCredential(tenant, client, secret);
    if (tenant || client || secret)
      throw new InvalidInputError(`${fn}: a service principal needs tenant_id, client_id and client_secret together`);
    return new identity.DefaultAzureCredential();
  }

  async function blobService(fn: string, o: Record<string, LuaValue>): Promise<BlobServiceClient> {
    const blob = await import('@azure/storage-blob');
    // tlsOptions reaches the pipeline, though StoragePipelineOptions does not name it.
    const options = tls(fn, o) as StoragePipelineOptions;
    const connectionString = luaOptionalString(fn, 'option connection_string', o.connection_string);
    if (connectionString) return blob.BlobServiceClient.fromConnectionString(connectionString, options);
    const account = luaOptionalString(fn, 'option account', o.account);
    const endpoint =
      luaOptionalString(fn, 'option endpoint', o.endpoint) ??
      (account ? `https://${account}.blob.core.windows.net` : undefined);
    if (!endpoint)
      throw new InvalidInputError(
        `${fn}: give option connection_string, or account (with account_key, sas or an Azure AD identity)`,
      );
    const key = luaOptionalString(fn, 'option account_key', o.account_key);
    if (key) {
      if (!account) throw new InvalidInputError(`${fn}: option account_key needs option account`);
      return new blob.BlobServiceClient(endpoint, new blob.StorageSharedKeyCredential(account, key), options);
    }
    const sas = luaOptionalString(fn, 'option sas', o.sas);
    if (sas) return new blob.BlobServiceClient(`${endpoint}?${sas.replace(/^\?/, '')}`, undefined, options);
    return new blob.BlobServiceClient(endpoint, await credential(fn, o), options);
  }

  async function compute(fn: string, o: Record<string, LuaValue>): Promise<ComputeManagementClient> {
    const subscription =
      luaOptionalString(fn, 'option subscription', o.subscription) ?? process.env.AZURE_SUBSCRIPTION_ID;
    if (!subscription)
      throw new InvalidInputError(
        `${fn}: option subscription is required (or AZURE_SUBSCRIPTION_ID in the runner's environment)`,
      );
    const { ComputeManagementClient } = await import('@azure/arm-compute');
    const endpoint = luaOptionalString(fn, 'option endpoint', o.endpoint);
    return new ComputeManagementClient(await credential(fn, o), subscription, {
      ...(endpoint ? { endpoint } : {}),
      ...tls(fn, o),
    });
  }

  async function put(
    call: LuaCallContext,
    fn: string,
    o: Record<string, LuaValue>,
    container: string,
    name: string,
    body: Buffer,
  ) {
    const client = (await blobService(fn, o)).getContainerClient(container).getBlockBlobClient(name);
    const md5 = blobMd5(body);
    let current: string | undefined;
    try {
      const props = await client.getProperties({ abortSignal: call.signal });
      current = props.contentMD5 ? Buffer.from(props.contentMD5).toString('base64') : undefined;
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode !== 404) throw azureError(fn, `${container}/${name}`, error);
    }
    if (current === md5) return { changed: false, md5 };
    if (call.dryRun)
      return { changed: true, dry_run: true, note: `dry-run: would write ${container}/${name} (${body.length} bytes)` };
    try {
      await client.upload(body, body.length, {
        abortSignal: call.signal,
        blobHTTPHeaders: {
          blobContentMD5: Buffer.from(md5, 'base64'),
          blobContentType: luaOptionalString(fn, 'option content_type', o.content_type),
        },
      });
    } catch (error) {
      throw azureError(fn, `write ${container}/${name}`, error);
    }
    return { changed: true, md5 };
  }

  async function startOrStop(
    call: LuaCallContext,
    verb: 'start' | 'stop',
    groupArg: LuaValue,
    nameArg: LuaValue,
    opts: LuaValue,
  ): Promise<LuaValue> {
    const fn = `azure.vm_${verb}`;
    const group = luaString(fn, 'argument 1 (resource group)', groupArg);
    const name = luaString(fn, 'argument 2 (vm)', nameArg);
    const o = readLuaOptions(fn, 3, opts, ARM);
    const client = await compute(fn, o);
    try {
      const state = powerState(
        (await client.virtualMachines.instanceView(group, name, { abortSignal: call.signal })).statuses,
      );
      if ((ALREADY[verb] as readonly string[]).includes(state)) return { changed: false, power_state: state };
      if (call.dryRun)
        return { changed: true, dry_run: true, power_state: state, note: `dry-run: would ${verb} ${name}` };
      // Stop deallocates, as the portal's Stop does: a VM only powered off is still billed.
      const poller =
        verb === 'start'
          ? await client.virtualMachines.beginStart(group, name)
          : await client.virtualMachines.beginDeallocate(group, name);
      await poller.pollUntilDone({ abortSignal: call.signal });
      return { changed: true, power_state: verb === 'start' ? 'running' : 'deallocated' };
    } catch (error) {
      throw azureError(fn, `${verb} ${name}`, error);
    }
  }

  const writers = objectWriters(
    { put: 'azure.blob_put', upload: 'azure.blob_upload' },
    ['container', 'name'],
    [...STORAGE, 'content_type'],
    put,
  );

  return {
    blob_put: writers.put,
    blob_upload: writers.upload,
    blob_get: async (call, containerArg, nameArg, opts) => {
      const fn = 'azure.blob_get';
      const container = luaString(fn, 'argument 1 (container)', containerArg);
      const name = luaString(fn, 'argument 2 (name)', nameArg);
      const client = (await blobService(fn, readLuaOptions(fn, 3, opts, STORAGE)))
        .getContainerClient(container)
        .getBlobClient(name);
      try {
        return (await client.downloadToBuffer(undefined, undefined, { abortSignal: call.signal })).toString('utf8');
      } catch (error) {
        if ((error as { statusCode?: number }).statusCode === 404) return null;
        throw azureError(fn, `read ${container}/${name}`, error);
      }
    },
    blob_delete: async (call, containerArg, nameArg, opts) => {
      const fn = 'azure.blob_delete';
      const container = luaString(fn, 'argument 1 (container)', containerArg);
      const name = luaString(fn, 'argument 2 (name)', nameArg);
      const client = (await blobService(fn, readLuaOptions(fn, 3, opts, STORAGE)))
        .getContainerClient(container)
        .getBlobClient(name);
      try {
        if (!(await client.exists({ abortSignal: call.signal }))) return { changed: false };
        if (call.dryRun) return { changed: true, dry_run: true, note: `dry-run: would delete ${container}/${name}` };
        return { changed: (await client.deleteIfExists({ abortSignal: call.signal })).succeeded };
      } catch (error) {
        throw azureError(fn, `delete ${container}/${name}`, error);
      }
    },
    blob_list: async (call, containerArg, opts) => {
      const fn = 'azure.blob_list';
      const container = luaString(fn, 'argument 1 (container)', containerArg);
      const o = readLuaOptions(fn, 2, opts, [...STORAGE, 'prefix']);
      const client = (await blobService(fn, o)).getContainerClient(container);
      const blobs: Record<string, unknown>[] = [];
      try {
        for await (const b of client.listBlobsFlat({
          prefix: luaOptionalString(fn, 'option prefix', o.prefix),
          abortSignal: call.signal,
        })) {
          blobs.push({
            name: b.name,
            size: b.properties.contentLength,
            md5: b.properties.contentMD5 ? Buffer.from(b.properties.contentMD5).toString('base64') : null,
            last_modified: b.properties.lastModified,
          });
        }
      } catch (error) {
        throw azureError(fn, `list ${container}`, error);
      }
      return toLuaValue(blobs);
    },
    container_create: async (call, containerArg, opts) => {
      const fn = 'azure.container_create';
      const container = luaString(fn, 'argument 1 (container)', containerArg);
      const client = (await blobService(fn, readLuaOptions(fn, 2, opts, STORAGE))).getContainerClient(container);
      try {
        if (await client.exists({ abortSignal: call.signal })) return { changed: false };
        if (call.dryRun) return { changed: true, dry_run: true, note: `dry-run: would create container ${container}` };
        return { changed: (await client.createIfNotExists({ abortSignal: call.signal })).succeeded };
      } catch (error) {
        throw azureError(fn, `create container ${container}`, error);
      }
    },
    vm_list: async (call, groupArg, opts) => {
      const fn = 'azure.vm_list';
      const group = luaString(fn, 'argument 1 (resource group)', groupArg);
      const client = await compute(fn, readLuaOptions(fn, 2, opts, ARM));
      const vms: Record<string, unknown>[] = [];
      try {
        for await (const vm of client.virtualMachines.list(group, { abortSignal: call.signal })) {
          vms.push({
            name: vm.name,
            id: vm.id,
            location: vm.location,
            size: vm.hardwareProfile?.vmSize,
            tags: vm.tags ?? {},
          });
        }
      } catch (error) {
        throw azureError(fn, `list VMs of ${group}`, error);
      }
      return toLuaValue(vms);
    },
    vm_state: async (call, groupArg, nameArg, opts) => {
      const fn = 'azure.vm_state';
      const group = luaString(fn, 'argument 1 (resource group)', groupArg);
      const name = luaString(fn, 'argument 2 (vm)', nameArg);
      const client = await compute(fn, readLuaOptions(fn, 3, opts, ARM));
      try {
        return powerState(
          (await client.virtualMachines.instanceView(group, name, { abortSignal: call.signal })).statuses,
        );
      } catch (error) {
        throw azureError(fn, `instance view of ${name}`, error);
      }
    },
    vm_start: (call, group, name, opts) => startOrStop(call, 'start', group, name, opts),
    vm_stop: (call, group, name, opts) => startOrStop(call, 'stop', group, name, opts),
  };
}
