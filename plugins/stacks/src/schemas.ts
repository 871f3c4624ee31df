import { AGENT_NAME_RULE, STACK_ENVIRONMENTS } from '@runner/plugin-sdk';
import { Type } from '@runner/plugin-sdk/schema';
import { MAX_DESCRIPTION, MAX_VARIABLE_BYTES, VARIABLE_KEY_RULE } from './stack-store.js';

/** Request and response schemas of /api/v1/stacks; names and keys are checked by the store (rules in words). */
const Environment = Type.Union(
  STACK_ENVIRONMENTS.map((e) => Type.Literal(e)),
  { description: 'production runs ask for a confirmation (--yes, "confirm": true, a dialog in the UI)' },
);
const Description = Type.String({ maxLength: MAX_DESCRIPTION, description: 'free text for people' });
const Variables = Type.Record(Type.String(), Type.String({ maxLength: MAX_VARIABLE_BYTES }), {
  description: `variables by key (${VARIABLE_KEY_RULE}): stack.vars.<key> in scripts and templates`,
});

export const LastExecution = Type.Object({
  id: Type.String(),
  workflow_name: Type.String(),
  status: Type.String(),
  started_at: Type.String(),
});

export const StackSchema = Type.Object({
  name: Type.String(),
  description: Type.String(),
  environment: Environment,
  active: Type.Boolean({ description: 'an inactive stack refuses runs naming it' }),
  variables: Variables,
  variable_count: Type.Integer(),
  secret_count: Type.Integer({ description: 'secrets of the stack (names at GET /secrets/:stack)' }),
  last_execution: Type.Union([LastExecution, Type.Null()], { description: 'the latest run of the stack' }),
  created_at: Type.String({ description: 'ISO 8601 UTC' }),
  updated_at: Type.String({ description: 'ISO 8601 UTC of the last change' }),
});

export const StackListSchema = Type.Object({ stacks: Type.Array(StackSchema), total: Type.Integer() });

export const StackParams = Type.Object({ name: Type.String({ minLength: 1, description: 'the stack name' }) });
export const VariableParams = Type.Object({
  name: Type.String({ minLength: 1, description: 'the stack name' }),
  key: Type.String({ minLength: 1, description: 'the variable key' }),
});

export const CreateStackBody = Type.Object(
  {
    name: Type.String({ minLength: 1, description: `the stack name: ${AGENT_NAME_RULE}` }),
    description: Type.Optional(Description),
    environment: Type.Optional(Environment),
    active: Type.Optional(Type.Boolean({ description: 'default true' })),
    variables: Type.Optional(Variables),
  },
  { additionalProperties: false },
);

export const UpdateStackBody = Type.Object(
  {
    description: Type.Optional(Description),
    environment: Type.Optional(Environment),
    active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const VariableBody = Type.Object(
  {
    key: Type.String({ minLength: 1, description: VARIABLE_KEY_RULE }),
    value: Type.String({ maxLength: MAX_VARIABLE_BYTES }),
  },
  { additionalProperties: false },
);
