import { positiveNumber, type ConfigDeclaration } from './config.js';
import { RESOURCES_CONFIG } from './resource-limits.js';

/**
 * Config keys the kernel and the SDK itself read (the master lookup is SDK code every command
 * shares), declared as a plugin's would be so they are checked, shown and documented alike.
 * Durations without a unit suffix are seconds, as everywhere in config.
 */
export const CORE_CONFIG: ConfigDeclaration = {
  debug: { schema: { type: 'boolean' }, default: false, help: 'log at debug level and print stacks with errors' },
  'plugins.dirs': {
    schema: { type: 'array', items: { type: 'string' } },
    default: [],
    help: 'more directories to load plugins from (RUNNER_PLUGINS_DIR: colon-separated)',
  },
  'kernel.setup_timeout': positiveNumber(10, "seconds a plugin's setup may take before the boot fails naming it"),
  'kernel.stop_timeout': positiveNumber(15, "seconds a plugin's stop may take (above the HTTP plugin's drain)"),
  'master.url': {
    schema: { type: 'string' },
    help: "the master's REST API base URL for CLI commands (RUNNER_MASTER_URL)",
  },
  'master.address': {
    schema: { type: 'string' },
    help: "the master's gRPC address host[:port], for agents and CLI commands (RUNNER_MASTER_ADDR)",
  },
  // Shared by the master side, the agent and `runner agent install`, so declared by none of them.
  'agent.join_token': {
    schema: { type: 'string' },
    help: 'token agents present to register (default: the token file in the data directory, `runner agent token show`)',
    secret: true,
  },
  'grpc.max_message_bytes': {
    schema: { type: 'integer', minimum: 1024 },
    default: 16 * 1024 * 1024,
    help: 'largest gRPC message, master and agent (bytes)',
  },
  'master.tls_cert': {
    schema: { type: 'string' },
    help: 'certificate (PEM) of the master or its CA, trusted by CLI commands for its HTTPS and gRPC TLS besides the system roots (--ca, RUNNER_CA)',
  },
  // What a host's tasks may use: the master's local ones and an agent's.
  ...RESOURCES_CONFIG,
};
