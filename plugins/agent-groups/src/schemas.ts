import { AGENT_NAME_RULE } from '@runner/plugin-sdk';
import { Type } from '@runner/plugin-sdk/schema';
import { MAX_DESCRIPTION, MAX_MEMBERS } from './group-store.js';

/**
 * Request and response schemas of /api/v1/agent-groups. Names are checked by the store (the
 * agent-name rule, said in words) rather than by a schema pattern, whose message would show a
 * regular expression.
 */
const Name = (what: string) => Type.String({ minLength: 1, description: `${what}: ${AGENT_NAME_RULE}` });
const Members = (description: string) => Type.Array(Name('agent name'), { maxItems: MAX_MEMBERS, description });
const Description = Type.String({ maxLength: MAX_DESCRIPTION, description: 'free text for people' });

export const GroupSchema = Type.Object({
  name: Type.String(),
  description: Type.String(),
  members: Type.Array(Type.String(), { description: 'agent names, sorted; an agent need not be connected' }),
  created_at: Type.String({ description: 'ISO 8601 UTC' }),
  updated_at: Type.String({ description: 'ISO 8601 UTC of the last change' }),
});

export const GroupListSchema = Type.Object({
  groups: Type.Array(GroupSchema),
  total: Type.Integer(),
});

export const GroupParams = Type.Object({ name: Type.String({ minLength: 1, description: 'the group name' }) });
export const RemoveMembersQuery = Type.Object(
  { agents: Type.String({ minLength: 1, description: 'comma-separated agent names to take out of the group' }) },
  { additionalProperties: false },
);

export const CreateGroupBody = Type.Object(
  {
    name: Name('group name'),
    description: Type.Optional(Description),
    members: Type.Optional(Members('agents to put in the group at once')),
  },
  { additionalProperties: false },
);

export const UpdateGroupBody = Type.Object(
  {
    description: Type.Optional(Description),
    members: Type.Optional(Members('replaces every member')),
  },
  { additionalProperties: false },
);

export const MembersBody = Type.Object(
  { agents: Members('agent names (several at once: the UI adds a whole selection)') },
  { additionalProperties: false },
);
