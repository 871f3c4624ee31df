import { defineLuaModule } from '@runner/plugin-sdk';

const CONN =
  'region?: string, endpoint?: string, credentials?: {access_key_id, secret_access_key, session_token?}, force_path_style?: boolean';
const CHANGED = '{changed, dry_run?, note?}';

export const awsModule = defineLuaModule({
  name: 'aws',
  description: 'AWS: S3 buckets and objects, EC2 instances, SSM parameters (AWS SDK v3)',
  docs: `
Uses the AWS SDK for JavaScript v3, loaded on the first call (it is large; runs that never touch AWS
do not load it). Credentials and region come from the SDK's usual chain (AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY or AWS_PROFILE in the runner's environment, ~/.aws, the instance's role), or
from opts.credentials, for instance a stack's secrets: { access_key_id = secrets.aws_key,
secret_access_key = secrets.aws_secret }. They are never logged nor returned. opts.endpoint and
opts.force_path_style reach an S3-compatible service (MinIO, Ceph). Every function that changes
something returns changed, true only when it changed something, and in dry-run only reads.`,
  functions: {
    s3_list_buckets: {
      args: [{ name: 'opts', type: `{${CONN}}`, optional: true }],
      result: '{name, created}[]',
      callsLua: false,
      sideEffects: false,
      description: 'The buckets of the account.',
    },
    s3_create_bucket: {
      args: [
        { name: 'bucket', type: 'string' },
        { name: 'opts', type: `{${CONN}}`, optional: true },
      ],
      result: CHANGED,
      callsLua: false,
      sideEffects: true,
      description: 'Creates a bucket in the region; changed = false when it exists (and is reachable).',
    },
    s3_delete_bucket: {
      args: [
        { name: 'bucket', type: 'string' },
        { name: 'opts', type: `{${CONN}}`, optional: true },
      ],
      result: CHANGED,
      callsLua: false,
      sideEffects: true,
      description: 'Deletes an empty bucket; changed = false when there was none.',
    },
    s3_put: {
      args: [
        { name: 'bucket', type: 'string' },
        { name: 'key', type: 'string' },
        { name: 'body', type: 'string' },
        { name: 'opts', type: `{${CONN}, content_type?: string, metadata?: table}`, optional: true },
      ],
      result: '{changed, etag}',
      callsLua: false,
      sideEffects: true,
      description:
        'Writes an object unless it already holds that content (its ETag is the MD5 of body): changed = false then, and nothing is sent.',
      example: `aws.s3_put("my-configs", "web/app.json", json.encode(cfg), { region = "eu-west-1", content_type = "application/json" })`,
    },
    s3_upload: {
      args: [
        { name: 'bucket', type: 'string' },
        { name: 'key', type: 'string' },
        { name: 'path', type: 'string' },
        { name: 'opts', type: `{${CONN}, content_type?: string, metadata?: table}`, optional: true },
      ],
      result: '{changed, etag}',
      callsLua: false,
      sideEffects: true,
      description: 'As s3_put, with the content of a local file (read whole: for files up to a few hundred MB).',
    },
    s3_get: {
      args: [
        { name: 'bucket', type: 'string' },
        { name: 'key', type: 'string' },
        { name: 'opts', type: `{${CONN}}`, optional: true },
      ],
      result: 'string|nil',
      callsLua: false,
      sideEffects: false,
      description: "An object's content as text, or nil when there is no such object.",
    },
    s3_download: {
      args: [
        { name: 'bucket', type: 'string' },
        { name: 'key', type: 'string' },
        { name: 'path', type: 'string' },
        { name: 'opts', type: `{${CONN}}`, optional: true },
      ],
      result: '{changed, path}',
      callsLua: false,
      sideEffects: true,
      description: 'Writes an object to a local file; changed = false when the file already held that content.',
    },
    s3_delete: {
      args: [
        { name: 'bucket', type: 'string' },
        { name: 'key', type: 'string' },
        { name: 'opts', type: `{${CONN}}`, optional: true },
      ],
      result: CHANGED,
      callsLua: false,
      sideEffects: true,
      description: 'Deletes an object; changed = false when there was none.',
    },
    s3_list: {
      args: [
        { name: 'bucket', type: 'string' },
        { name: 'opts', type: `{${CONN}, prefix?: string, max?: number}`, optional: true },
      ],
      result: '{key, size, etag, last_modified}[]',
      callsLua: false,
      sideEffects: false,
      description: 'The objects under opts.prefix, up to opts.max (1000 by default), following pages.',
    },
    ec2_instances: {
      args: [{ name: 'opts', type: `{${CONN}, ids?: string[], filters?: table}`, optional: true }],
      result: '{id, state, type, image, private_ip, public_ip, launched, tags}[]',
      callsLua: false,
      sideEffects: false,
      description:
        'Describes instances: those of opts.ids, or those matching opts.filters ({ ["tag:Name"] = "web", ["instance-state-name"] = "running,stopped" }).',
      example: `for _, i in ipairs(aws.ec2_instances({ region = "eu-west-1", filters = { ["tag:role"] = "web" } })) do log.info(i.id, { state = i.state }) end`,
    },
    ec2_start: {
      args: [
        { name: 'ids', type: 'string|string[]' },
        { name: 'opts', type: `{${CONN}}`, optional: true },
      ],
      result: '{changed, instances}',
      callsLua: false,
      sideEffects: true,
      description:
        'Starts the instances that are not pending or running; instances lists those started, changed = false when none needed it.',
    },
    ec2_stop: {
      args: [
        { name: 'ids', type: 'string|string[]' },
        { name: 'opts', type: `{${CONN}}`, optional: true },
      ],
      result: '{changed, instances}',
      callsLua: false,
      sideEffects: true,
      description: 'Stops the instances that are not stopping or stopped; as ec2_start otherwise.',
    },
    ssm_get_parameter: {
      args: [
        { name: 'name', type: 'string' },
        { name: 'opts', type: `{${CONN}}`, optional: true },
      ],
      result: 'string|nil',
      callsLua: false,
      sideEffects: false,
      description: "A parameter's value (a SecureString decrypted), or nil when there is none.",
    },
    ssm_put_parameter: {
      args: [
        { name: 'name', type: 'string' },
        { name: 'value', type: 'string' },
        {
          name: 'opts',
          type: `{${CONN}, type?: "String"|"StringList"|"SecureString", description?: string}`,
          optional: true,
        },
      ],
      result: '{changed, version}',
      callsLua: false,
      sideEffects: true,
      description: 'Creates or overwrites a parameter unless it already has that value and type.',
    },
    ssm_delete_parameter: {
      args: [
        { name: 'name', type: 'string' },
        { name: 'opts', type: `{${CONN}}`, optional: true },
      ],
      result: CHANGED,
      callsLua: false,
      sideEffects: true,
      description: 'Deletes a parameter; changed = false when there was none.',
    },
  },
});
