import { Type } from '@runner/plugin-sdk/schema';
import { MAX_SECRET_BYTES, SECRET_NAME_RULE } from './secret-store.js';

/**
 * Request and response schemas of /api/v1/secrets. No answer has a field that could hold a value:
 * names, times, who changed a secret and the flows that use it.
 */
export const StackParams = Type.Object({ stack: Type.String({ minLength: 1, description: 'the stack name' }) });
export const SecretParams = Type.Object({
  stack: Type.String({ minLength: 1, description: 'the stack name' }),
  name: Type.String({ minLength: 1, description: `the secret name: ${SECRET_NAME_RULE}` }),
});

export const SecretSummary = Type.Object({
  name: Type.String(),
  updated_at: Type.String({ description: 'ISO 8601 UTC of the last change' }),
  updated_by: Type.String({ description: 'who set it last' }),
  used_by: Type.Array(Type.String(), { description: 'saved flows whose current YAML reads secrets.<name>' }),
});

export const SecretListSchema = Type.Object({
  stack: Type.String(),
  secrets: Type.Array(SecretSummary),
  total: Type.Integer(),
});

export const PutSecretBody = Type.Object(
  {
    // Optional in the schema so the CLI may omit it on its command line and read it from a
    // prompt or stdin; the service refuses an empty value.
    value: Type.Optional(
      Type.String({
        maxLength: MAX_SECRET_BYTES,
        description: 'the plaintext (required); sealed before it is stored, never returned',
      }),
    ),
  },
  { additionalProperties: false },
);

export const PutSecretAnswer = Type.Object({
  stack: Type.String(),
  name: Type.String(),
  updated_at: Type.String(),
  created: Type.Boolean({ description: 'false when an existing value was replaced' }),
});

export const RotateAnswer = Type.Object({
  rotated: Type.Integer({ description: 'values sealed again under the new key (every scope)' }),
  key_id: Type.String({ description: "the new key's id (a digest, not the key)" }),
  previous_key_id: Type.Optional(Type.String()),
});
