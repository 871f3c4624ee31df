import { Type } from '@runner/plugin-sdk/schema';

/**
 * The agents API's request and response schemas: the router validates requests with them and the
 * OpenAPI document shows them. They mirror the SDK's Agent types (plugin-sdk/src/agents.ts).
 */
const Iso = Type.String({ description: 'ISO 8601 UTC' });

export const AgentSchema = Type.Object({
  name: Type.String(),
  address: Type.String({ description: 'host:port the agent connected from' }),
  status: Type.Union([Type.Literal('online'), Type.Literal('offline'), Type.Literal('warning'), Type.Literal('error')]),
  last_heartbeat: Type.String({ description: 'ISO 8601 UTC; empty before the first heartbeat' }),
  cpu_usage: Type.Number({ description: 'percent' }),
  memory_usage: Type.Number({ description: 'percent' }),
  uptime: Type.Number({ description: 'seconds the agent process has run' }),
  version: Type.String(),
  hostname: Type.String(),
  os: Type.String(),
  registered_at: Iso,
  modules: Type.Array(Type.String()),
  labels: Type.Record(Type.String(), Type.String()),
  enrolled_at: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description: 'ISO 8601 UTC of when the master issued the agent its own credential; null when it has none',
    }),
  ),
  revoked_at: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description: 'ISO 8601 UTC of the revocation of its credential (`runner agent revoke`); null while valid',
    }),
  ),
});

export const AgentParams = Type.Object({ name: Type.String({ minLength: 1, description: 'the agent name' }) });

export const AgentListQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ description: 'page size, 1 to 1000 (default 100)' })),
    offset: Type.Optional(Type.String({ description: 'agents to skip (default 0)' })),
    status: Type.Optional(Type.String({ description: 'comma-separated: online (or active), offline, warning, error' })),
    name: Type.Optional(Type.String({ description: 'case-insensitive substring of the name' })),
    label: Type.Optional(Type.String({ description: 'comma-separated key=value or key; all must match' })),
    group: Type.Optional(Type.String({ description: "an agent group's name: only its members" })),
  },
  { additionalProperties: false },
);

export const AgentListSchema = Type.Object({
  agents: Type.Array(AgentSchema),
  total: Type.Integer({ description: 'agents matching the filters, before paging' }),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

export const AgentMetricsSchema = Type.Object({
  cpu: Type.Object({
    cores: Type.Number(),
    usage_percent: Type.Number(),
    load_avg: Type.Array(Type.Number(), { minItems: 3, maxItems: 3 }),
  }),
  memory: Type.Object({ total_bytes: Type.Number(), used_bytes: Type.Number(), usage_percent: Type.Number() }),
  disk: Type.Object({ total_bytes: Type.Number(), used_bytes: Type.Number(), usage_percent: Type.Number() }),
  network: Type.Object({ rx_bytes_per_sec: Type.Number(), tx_bytes_per_sec: Type.Number() }),
  processes: Type.Number(),
  uptime: Type.Number(),
  collected_at: Iso,
});

export const ProcessesSchema = Type.Object({
  processes: Type.Array(
    Type.Object({
      pid: Type.Integer(),
      name: Type.String(),
      command: Type.String(),
      cpu_percent: Type.Number(),
      memory_bytes: Type.Number(),
      user: Type.String(),
    }),
  ),
});

export const NetworkSchema = Type.Object({
  interfaces: Type.Array(
    Type.Object({
      name: Type.String(),
      addresses: Type.Array(Type.String()),
      rx_bytes: Type.Number(),
      tx_bytes: Type.Number(),
      rx_bytes_per_sec: Type.Number(),
      tx_bytes_per_sec: Type.Number(),
    }),
  ),
});

export const DisksSchema = Type.Object({
  disks: Type.Array(
    Type.Object({
      mount: Type.String(),
      fs_type: Type.String(),
      total_bytes: Type.Number(),
      used_bytes: Type.Number(),
      usage_percent: Type.Number(),
    }),
  ),
});

/**
 * `timeout` keeps its duration grammar ("30s", "5m", or seconds) and `command` its per-element
 * messages in requests.ts; the schema fixes the shape and the OpenAPI document shows it.
 */
export const ExecBody = Type.Object(
  {
    command: Type.Union([Type.String(), Type.Array(Type.String())], {
      description: "a string run by the agent's shell, or program and arguments",
    }),
    timeout: Type.Optional(
      Type.Union([Type.Number(), Type.String()], { description: 'seconds or a duration such as "30s" (default 60 s)' }),
    ),
    cwd: Type.Optional(Type.String({ description: 'working directory on the agent' })),
  },
  { additionalProperties: false },
);

export const ExecResultSchema = Type.Object({
  stdout: Type.String(),
  stderr: Type.String(),
  exit_code: Type.Union([Type.Integer(), Type.Null()]),
  timed_out: Type.Boolean(),
  duration: Type.Number({ description: 'seconds' }),
});

export const AgentActionSchema = Type.Object({ name: Type.String(), action: Type.String(), message: Type.String() });

/** `POST /agents/:name/install`: what `runner agent install --ssh-profile` sends (the master connects). */
export const InstallBody = Type.Object(
  {
    ssh_profile: Type.String({
      minLength: 1,
      description: 'the SSH profile the master connects with (its credentials and pinned host key never leave it)',
    }),
    update: Type.Optional(
      Type.Boolean({ description: 'update the agent installed there instead (it keeps how it runs; master optional)' }),
    ),
    master: Type.Optional(
      Type.String({
        minLength: 1,
        description: "the master's gRPC address as the agent host reaches it (install: required)",
      }),
    ),
    token: Type.Optional(
      Type.String({
        minLength: 1,
        description: "join token the agent presents (default: this master's agent.join_token)",
      }),
    ),
    master_tls_cert: Type.Optional(
      Type.String({
        description: "the master's TLS certificate (PEM), copied to the agent host for the agent to trust",
      }),
    ),
    insecure: Type.Optional(
      Type.Boolean({ description: 'let the agent connect without TLS to a master beyond its host' }),
    ),
    remote_dir: Type.Optional(
      Type.String({
        description: 'where to install (default /opt/runner-agent/<name> as root, else ~/.runner-agent/<name>)',
      }),
    ),
    node_path: Type.Optional(Type.String({ description: 'node on the agent host (default: the one on its PATH)' })),
    force: Type.Optional(Type.Boolean({ description: 'install over an existing installation of this agent' })),
  },
  { additionalProperties: false },
);
