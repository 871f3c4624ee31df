import { AGENT_NAME_RULE } from '@runner/plugin-sdk';
import { Type } from '@runner/plugin-sdk/schema';

/** Request and response schemas of /api/v1/ssh. Credentials go in, never out. */
export const ProfileSchema = Type.Object({
  name: Type.String(),
  host: Type.String(),
  port: Type.Integer(),
  user: Type.String(),
  auth_type: Type.Union([Type.Literal('key'), Type.Literal('password')]),
  key_path: Type.Optional(Type.String({ description: 'the private key file on the master' })),
  has_secret: Type.Boolean({ description: 'a password or key is stored encrypted (never returned)' }),
  host_key: Type.Optional(
    Type.Object(
      { type: Type.String(), fingerprint: Type.String({ description: 'SHA256:...' }) },
      {
        description: 'the pinned host key; absent until a connection with trust_host_key',
      },
    ),
  ),
  description: Type.String(),
  workflows: Type.Boolean({ description: 'workflows may use the profile (the Lua ssh module)' }),
  last_used_at: Type.Optional(Type.String({ description: 'ISO 8601 UTC of the last connection' })),
  connection_count: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const ProfileListSchema = Type.Object({ profiles: Type.Array(ProfileSchema), total: Type.Integer() });

export const ProfileParams = Type.Object({ name: Type.String({ minLength: 1, description: 'the profile name' }) });

const fields = {
  host: Type.String({ minLength: 1, maxLength: 255, description: 'host name or address' }),
  port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: 'default 22' })),
  user: Type.String({ minLength: 1, maxLength: 64 }),
  auth_type: Type.Union([Type.Literal('key'), Type.Literal('password')]),
  key_path: Type.Optional(
    Type.String({ minLength: 1, description: 'auth_type key: a private key file on the master' }),
  ),
  private_key: Type.Optional(
    Type.String({ minLength: 1, description: 'auth_type key: a private key stored encrypted (secrets service)' }),
  ),
  password: Type.Optional(Type.String({ minLength: 1, description: 'auth_type password: stored encrypted' })),
  description: Type.Optional(Type.String({ maxLength: 500 })),
  workflows: Type.Optional(Type.Boolean({ description: 'allow workflows to use the profile; default false' })),
};

export const CreateProfileBody = Type.Object(
  { name: Type.String({ minLength: 1, description: `profile name: ${AGENT_NAME_RULE}` }), ...fields },
  { additionalProperties: false },
);

export const UpdateProfileBody = Type.Object(
  {
    ...fields,
    unpin_host_key: Type.Optional(
      Type.Boolean({ description: 'forget the pinned host key (the next connection must trust one again)' }),
    ),
  },
  { additionalProperties: false },
);

export const TestBody = Type.Object(
  {
    trust_host_key: Type.Optional(
      Type.Boolean({ description: 'pin the key the host offers when none is pinned yet (never replaces one)' }),
    ),
  },
  { additionalProperties: false },
);

export const TestResultSchema = Type.Object({
  ok: Type.Boolean(),
  host_key: Type.Object({ type: Type.String(), fingerprint: Type.String() }),
  /** What `uname -a` answered: proof a command ran. */
  remote: Type.String(),
  duration_ms: Type.Number(),
});

export const AuditQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  },
  { additionalProperties: false },
);

export const AuditSchema = Type.Object({
  entries: Type.Array(
    Type.Object({
      id: Type.Integer(),
      profile: Type.String(),
      at: Type.String(),
      actor: Type.String(),
      action: Type.String(),
      detail: Type.String(),
      result: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
    }),
  ),
  total: Type.Integer(),
});
