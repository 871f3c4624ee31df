import { defineLuaModule } from '@runner/plugin-sdk';

const STORAGE =
  'connection_string?: string, account?: string, account_key?: string, sas?: string, endpoint?: string, ca_file?: string, access_token?: string, tenant_id?: string, client_id?: string, client_secret?: string';
const ARM =
  'subscription?: string, access_token?: string, tenant_id?: string, client_id?: string, client_secret?: string, endpoint?: string, ca_file?: string';

export const azureModule = defineLuaModule({
  name: 'azure',
  description: 'Azure: Blob storage and virtual machines (official SDKs)',
  docs: `
Uses Microsoft's official clients (@azure/storage-blob, @azure/arm-compute, @azure/identity), loaded
on the first call. Blob storage is reached with opts.connection_string, or opts.account with
opts.account_key, opts.sas or an Azure AD identity; virtual machines with opts.subscription (else
AZURE_SUBSCRIPTION_ID) as a service principal (tenant_id, client_id, client_secret), with a token
(access_token), or else DefaultAzureCredential (AZURE_* variables, a managed identity, az login).
Pass credentials from a stack's secrets; they are never logged nor returned. opts.endpoint reaches
another cloud or an emulator, opts.ca_file trusts a private CA. Functions that change something
return changed, true only when they changed something, and in dry-run only read.`,
  functions: {
    container_create: {
      args: [
        { name: 'container', type: 'string' },
        { name: 'opts', type: `{${STORAGE}}`, optional: true },
      ],
      result: '{changed, dry_run?}',
      callsLua: false,
      sideEffects: true,
      description: 'Creates a blob container; changed = false when it exists.',
    },
    blob_put: {
      args: [
        { name: 'container', type: 'string' },
        { name: 'name', type: 'string' },
        { name: 'body', type: 'string' },
        { name: 'opts', type: `{${STORAGE}, content_type?: string}`, optional: true },
      ],
      result: '{changed, md5}',
      callsLua: false,
      sideEffects: true,
      description:
        'Writes a block blob unless it already holds that content (its Content-MD5, which every write here sets): changed = false then, and nothing is sent.',
      example: `azure.blob_put("configs", "web/app.json", json.encode(cfg), { connection_string = secrets.azure_storage })`,
    },
    blob_upload: {
      args: [
        { name: 'container', type: 'string' },
        { name: 'name', type: 'string' },
        { name: 'path', type: 'string' },
        { name: 'opts', type: `{${STORAGE}, content_type?: string}`, optional: true },
      ],
      result: '{changed, md5}',
      callsLua: false,
      sideEffects: true,
      description: 'As blob_put, with the content of a local file.',
    },
    blob_get: {
      args: [
        { name: 'container', type: 'string' },
        { name: 'name', type: 'string' },
        { name: 'opts', type: `{${STORAGE}}`, optional: true },
      ],
      result: 'string|nil',
      callsLua: false,
      sideEffects: false,
      description: "A blob's content as text, or nil when there is no such blob.",
    },
    blob_delete: {
      args: [
        { name: 'container', type: 'string' },
        { name: 'name', type: 'string' },
        { name: 'opts', type: `{${STORAGE}}`, optional: true },
      ],
      result: '{changed, dry_run?}',
      callsLua: false,
      sideEffects: true,
      description: 'Deletes a blob; changed = false when there was none.',
    },
    blob_list: {
      args: [
        { name: 'container', type: 'string' },
        { name: 'opts', type: `{${STORAGE}, prefix?: string}`, optional: true },
      ],
      result: '{name, size, md5, last_modified}[]',
      callsLua: false,
      sideEffects: false,
      description: 'The blobs of a container under opts.prefix.',
    },
    vm_list: {
      args: [
        { name: 'resource_group', type: 'string' },
        { name: 'opts', type: `{${ARM}}`, optional: true },
      ],
      result: '{name, id, location, size, tags}[]',
      callsLua: false,
      sideEffects: false,
      description: 'The virtual machines of a resource group.',
    },
    vm_state: {
      args: [
        { name: 'resource_group', type: 'string' },
        { name: 'vm', type: 'string' },
        { name: 'opts', type: `{${ARM}}`, optional: true },
      ],
      result: 'string',
      callsLua: false,
      sideEffects: false,
      description: 'A VM\'s power state: "running", "deallocated", "stopped", "starting", ...',
    },
    vm_start: {
      args: [
        { name: 'resource_group', type: 'string' },
        { name: 'vm', type: 'string' },
        { name: 'opts', type: `{${ARM}}`, optional: true },
      ],
      result: '{changed, power_state}',
      callsLua: false,
      sideEffects: true,
      description: 'Starts a VM unless it is starting or running, and waits until Azure reports the operation done.',
    },
    vm_stop: {
      args: [
        { name: 'resource_group', type: 'string' },
        { name: 'vm', type: 'string' },
        { name: 'opts', type: `{${ARM}}`, optional: true },
      ],
      result: '{changed, power_state}',
      callsLua: false,
      sideEffects: true,
      description:
        "Stops and deallocates a VM (as the portal's Stop: a VM only powered off is still billed) unless it is already stopping, stopped or deallocated.",
    },
  },
});
