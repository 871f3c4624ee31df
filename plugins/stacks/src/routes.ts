import {
  ConflictError,
  reply,
  serve,
  type HttpRouter,
  type SecretsService,
  type Stack,
  type WorkflowEngine,
} from '@runner/plugin-sdk';
import * as api from './api.js';
import type { StackStore } from './stack-store.js';

interface Sources {
  engine: Pick<WorkflowEngine, 'list'>;
  secrets?: Pick<SecretsService, 'list'>;
}

/** A stack as the API shows it: with its counts and its latest run (a read each, on request only). */
async function toApi(stack: Stack, { engine, secrets }: Sources) {
  const [{ runs }, names] = await Promise.all([
    engine.list({ stack: stack.name, limit: 1 }),
    secrets ? secrets.list(stack.name) : Promise.resolve([]),
  ]);
  const last = runs[0];
  return {
    ...stack,
    variable_count: Object.keys(stack.variables).length,
    secret_count: names.length,
    last_execution: last
      ? { id: last.id, workflow_name: last.workflowName, status: last.status, started_at: last.startedAt }
      : null,
  };
}

/** `/api/v1/stacks` (service.md section 4). */
export function registerStackRoutes(router: HttpRouter, stacks: StackStore, sources: Sources): void {
  router.add(
    serve(api.getStacks, async () => {
      const list = await Promise.all(stacks.list().map((stack) => toApi(stack, sources)));
      return { stacks: list, total: list.length };
    }),
  );
  router.add(serve(api.getStacksName, ({ params }) => toApi(stacks.require(params.name), sources)));
  router.add(serve(api.postStacks, async ({ body }) => reply(201, await toApi(await stacks.create(body), sources))));
  router.add(
    serve(api.putStacksName, async ({ params, body }) => toApi(await stacks.update(params.name, body), sources)),
  );
  router.add(
    serve(api.deleteStacksName, async ({ params }) => {
      stacks.require(params.name);
      const held = (await sources.secrets?.list(params.name)) ?? [];
      // Removing the stack would orphan sealed values nobody could list: said, not done.
      if (held.length > 0)
        throw new ConflictError(
          `stack "${params.name}" holds ${held.length} secret(s) (${held.map((s) => s.name).join(', ')}): ` +
            `remove them first (runner secret remove ${params.name} <name>)`,
        );
      await stacks.delete(params.name);
      return reply(204, undefined);
    }),
  );
  router.add(
    serve(api.postStacksNameVariables, async ({ params, body }) =>
      toApi(await stacks.setVariable(params.name, body.key, body.value), sources),
    ),
  );
  router.add(
    serve(api.deleteStacksNameVariablesKey, async ({ params }) =>
      toApi(await stacks.unsetVariable(params.name, params.key), sources),
    ),
  );
}
