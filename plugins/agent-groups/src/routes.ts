import * as api from './api.js';
import { serve, reply, type HttpRouter } from '@runner/plugin-sdk';
import type { AgentGroupStore } from './group-store.js';

/** `/api/v1/agent-groups`: list, create, show, change, delete, and add or remove members in bulk. */
export function registerGroupRoutes(router: HttpRouter, groups: AgentGroupStore): void {
  router.add(
    serve(api.getAgentGroups, () => {
      const list = groups.list();
      return { groups: list, total: list.length };
    }),
  );

  router.add(serve(api.postAgentGroups, async ({ body }) => reply(201, await groups.create(body))));

  router.add(serve(api.getAgentGroupsName, ({ params }) => groups.require(params.name)));

  router.add(serve(api.patchAgentGroupsName, ({ params, body }) => groups.update(params.name, body)));

  router.add(
    serve(api.deleteAgentGroupsName, async ({ params }) => {
      await groups.delete(params.name);
      return undefined;
    }),
  );

  router.add(serve(api.postAgentGroupsNameMembers, ({ params, body }) => groups.addMembers(params.name, body.agents)));

  router.add(
    serve(api.deleteAgentGroupsNameMembers, ({ params, query }) =>
      groups.removeMembers(
        params.name,
        query.agents
          .split(',')
          .map((a) => a.trim())
          .filter(Boolean),
      ),
    ),
  );
}
