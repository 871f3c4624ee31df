// The REST routes this plugin serves, declared without handlers: the build writes the OpenAPI
// document and the UI client from them, the CLI builds commands from them (see RouteDeclaration).
import { Permissions, declareRoute } from '@runner/plugin-sdk';
import {
  GroupListSchema,
  CreateGroupBody,
  GroupSchema,
  GroupParams,
  UpdateGroupBody,
  MembersBody,
  RemoveMembersQuery,
} from './schemas.js';

const tags = ['agent-groups'];

export const getAgentGroups = declareRoute({
  method: 'GET',
  path: '/agent-groups',
  summary: 'list agent groups with their members',
  tags,
  permission: Permissions.groupView,
  responses: { 200: GroupListSchema },
});

export const postAgentGroups = declareRoute({
  method: 'POST',
  path: '/agent-groups',
  summary: 'create an agent group (optionally with its first members)',
  tags,
  permission: Permissions.groupManage,
  body: CreateGroupBody,
  responses: { 201: GroupSchema, 409: { description: 'a group of that name exists' } },
});

export const getAgentGroupsName = declareRoute({
  method: 'GET',
  path: '/agent-groups/:name',
  summary: 'one agent group',
  tags,
  permission: Permissions.groupView,
  params: GroupParams,
  responses: { 200: GroupSchema },
});

export const patchAgentGroupsName = declareRoute({
  method: 'PATCH',
  path: '/agent-groups/:name',
  summary: "change a group's description, or replace its members",
  tags,
  permission: Permissions.groupManage,
  params: GroupParams,
  body: UpdateGroupBody,
  responses: { 200: GroupSchema },
});

export const deleteAgentGroupsName = declareRoute({
  method: 'DELETE',
  path: '/agent-groups/:name',
  summary: 'delete an agent group (its agents are not touched)',
  tags,
  permission: Permissions.groupManage,
  params: GroupParams,
  responses: { 204: { description: 'deleted' } },
});

export const postAgentGroupsNameMembers = declareRoute({
  method: 'POST',
  path: '/agent-groups/:name/members',
  summary: 'add agents to a group (those already in it are left as they are)',
  tags,
  permission: Permissions.groupManage,
  params: GroupParams,
  body: MembersBody,
  responses: { 200: GroupSchema },
});

export const deleteAgentGroupsNameMembers = declareRoute({
  method: 'DELETE',
  path: '/agent-groups/:name/members',
  summary: 'take agents out of a group (?agents=a,b; names not in it are ignored)',
  tags,
  permission: Permissions.groupManage,
  params: GroupParams,
  query: RemoveMembersQuery,
  responses: { 200: GroupSchema },
});

/** Every route above, for the plugin's definition. */
export const routes = [
  getAgentGroups,
  postAgentGroups,
  getAgentGroupsName,
  patchAgentGroupsName,
  deleteAgentGroupsName,
  postAgentGroupsNameMembers,
  deleteAgentGroupsNameMembers,
];
