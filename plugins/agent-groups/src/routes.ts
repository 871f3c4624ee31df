import { defineRoute, Permissions, reply, type HttpRouter } from '@runner/plugin-sdk';
import type { AgentGroupStore } from './group-store.js';
import {
  CreateGroupBody,
  GroupListSchema,
  GroupParams,
  GroupSchema,
  MembersBody,
  RemoveMembersQuery,
  UpdateGroupBody,
} from './schemas.js';

const tags = ['agent-groups'];

/** `/api/v1/agent-groups`: list, create, show, change, delete, and add or remove members in bulk. */
export function registerGroupRoutes(router: HttpRouter, groups: AgentGroupStore): void {
  router.add(
    defineRoute({
      method: 'GET',
      path: '/agent-groups',
      summary: 'list agent groups with their members',
      tags,
      permission: Permissions.groupView,
      responses: { 200: GroupListSchema },
      handler: () => {
        const list = groups.list();
        return { groups: list, total: list.length };
      },
    }),
  );

  router.add(
    defineRoute({
      method: 'POST',
      path: '/agent-groups',
      summary: 'create an agent group (optionally with its first members)',
      tags,
      permission: Permissions.groupManage,
      body: CreateGroupBody,
      responses: { 201: GroupSchema, 409: { description: 'a group of that name exists' } },
      handler: async ({ body }) => reply(201, await groups.create(body)),
    }),
  );

  router.add(
    defineRoute({
      method: 'GET',
      path: '/agent-groups/:name',
      summary: 'one agent group',
      tags,
      permission: Permissions.groupView,
      params: GroupParams,
      responses: { 200: GroupSchema },
      handler: ({ params }) => groups.require(params.name),
    }),
  );

  router.add(
    defineRoute({
      method: 'PATCH',
      path: '/agent-groups/:name',
      summary: "change a group's description, or replace its members",
      tags,
      permission: Permissions.groupManage,
      params: GroupParams,
      body: UpdateGroupBody,
      responses: { 200: GroupSchema },
      handler: ({ params, body }) => groups.update(params.name, body),
    }),
  );

  router.add(
    defineRoute({
      method: 'DELETE',
      path: '/agent-groups/:name',
      summary: 'delete an agent group (its agents are not touched)',
      tags,
      permission: Permissions.groupManage,
      params: GroupParams,
      responses: { 204: { description: 'deleted' } },
      handler: async ({ params }) => {
        await groups.delete(params.name);
        return undefined;
      },
    }),
  );

  router.add(
    defineRoute({
      method: 'POST',
      path: '/agent-groups/:name/members',
      summary: 'add agents to a group (those already in it are left as they are)',
      tags,
      permission: Permissions.groupManage,
      params: GroupParams,
      body: MembersBody,
      responses: { 200: GroupSchema },
      handler: ({ params, body }) => groups.addMembers(params.name, body.agents),
    }),
  );

  router.add(
    defineRoute({
      method: 'DELETE',
      path: '/agent-groups/:name/members',
      summary: 'take agents out of a group (?agents=a,b; names not in it are ignored)',
      tags,
      permission: Permissions.groupManage,
      params: GroupParams,
      query: RemoveMembersQuery,
      responses: { 200: GroupSchema },
      handler: ({ params, query }) =>
        groups.removeMembers(
          params.name,
          query.agents
            .split(',')
            .map((a) => a.trim())
            .filter(Boolean),
        ),
    }),
  );
}
