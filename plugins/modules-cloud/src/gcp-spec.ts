import { defineLuaModule } from '@runner/plugin-sdk';

const CONN = 'project?: string, access_token?: string, credentials?: table, endpoint?: string';

export const gcpModule = defineLuaModule({
  name: 'gcp',
  description: 'Google Cloud: Cloud Storage objects and Compute Engine instances (official SDKs)',
  docs: `
Uses Google's official clients (@google-cloud/storage; @google-cloud/compute over its REST
transport), loaded on the first call: the Compute Engine client reads its API description (about
5 s, once per process). Credentials: opts.access_token (an OAuth token), opts.credentials (a
service account key: the table of its JSON, from a secret), or else Application Default
Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's login, the instance's service account). They
are never logged nor returned. The project is opts.project, else GOOGLE_CLOUD_PROJECT.
opts.endpoint ("http://127.0.0.1:4443") reaches an emulator. Functions that change something
return changed, true only when they changed something, and in dry-run only read.`,
  functions: {
    storage_put: {
      args: [
        { name: 'bucket', type: 'string' },
        { name: 'name', type: 'string' },
        { name: 'body', type: 'string' },
        { name: 'opts', type: `{${CONN}, content_type?: string}`, optional: true },
      ],
      result: '{changed, md5}',
      callsLua: false,
      sideEffects: true,
      description:
        "Writes an object unless it already holds that content (Cloud Storage's md5Hash): changed = false then, and nothing is sent.",
      example: `gcp.storage_put("my-configs", "web/app.json", json.encode(cfg), { project = "acme-prod" })`,
    },
    storage_upload: {
      args: [
        { name: 'bucket', type: 'string' },
        { name: 'name', type: 'string' },
        { name: 'path', type: 'string' },
        { name: 'opts', type: `{${CONN}, content_type?: string}`, optional: true },
      ],
      result: '{changed, md5}',
      callsLua: false,
      sideEffects: true,
      description: 'As storage_put, with the content of a local file.',
    },
    storage_get: {
      args: [
        { name: 'bucket', type: 'string' },
        { name: 'name', type: 'string' },
        { name: 'opts', type: `{${CONN}}`, optional: true },
      ],
      result: 'string|nil',
      callsLua: false,
      sideEffects: false,
      description: "An object's content as text, or nil when there is no such object.",
    },
    storage_delete: {
      args: [
        { name: 'bucket', type: 'string' },
        { name: 'name', type: 'string' },
        { name: 'opts', type: `{${CONN}}`, optional: true },
      ],
      result: '{changed, dry_run?}',
      callsLua: false,
      sideEffects: true,
      description: 'Deletes an object; changed = false when there was none.',
    },
    storage_list: {
      args: [
        { name: 'bucket', type: 'string' },
        { name: 'opts', type: `{${CONN}, prefix?: string, max?: number}`, optional: true },
      ],
      result: '{name, size, md5, updated}[]',
      callsLua: false,
      sideEffects: false,
      description: 'The objects under opts.prefix, up to opts.max (1000 by default).',
    },
    compute_instances: {
      args: [
        { name: 'zone', type: 'string' },
        { name: 'opts', type: `{${CONN}, filter?: string}`, optional: true },
      ],
      result: '{name, id, status, machine_type, internal_ip, external_ip, labels}[]',
      callsLua: false,
      sideEffects: false,
      description: 'The instances of a zone, filtered by opts.filter in the API\'s syntax ("labels.role=web").',
    },
    compute_start: {
      args: [
        { name: 'zone', type: 'string' },
        { name: 'instance', type: 'string' },
        { name: 'opts', type: `{${CONN}}`, optional: true },
      ],
      result: '{changed, operation?, status?}',
      callsLua: false,
      sideEffects: true,
      description: `Starts an instance unless it is provisioning, staging or running (changed = false, with its status).
Returns once Compute Engine has accepted the request, with the operation's name.`,
    },
    compute_stop: {
      args: [
        { name: 'zone', type: 'string' },
        { name: 'instance', type: 'string' },
        { name: 'opts', type: `{${CONN}}`, optional: true },
      ],
      result: '{changed, operation?, status?}',
      callsLua: false,
      sideEffects: true,
      description:
        'Stops an instance unless it is stopping, stopped, terminated or suspended; as compute_start otherwise.',
    },
  },
});
