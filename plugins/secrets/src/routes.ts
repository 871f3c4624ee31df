import { InvalidInputError, reply, serve, type FlowsService, type HttpRouter } from '@runner/plugin-sdk';
import * as api from './api.js';
import { checkScope, checkSecretName, type SecretStore } from './secret-store.js';

/** A stack's name as a scope: the reserved owner scopes (`ssh-profile:<name>`) are their plugins', not the API's. */
function apiScope(stack: string): string {
  checkScope(stack);
  if (stack.includes(':'))
    throw new InvalidInputError(`${stack} is a scope another plugin owns (its values are managed through it)`, {
      field: 'stack',
    });
  return stack;
}

/** An API scope that names an existing stack (the stacks plugin's check): a typo stores nothing. */
async function stackScope(secrets: SecretStore, stack: string): Promise<string> {
  await secrets.checkStack(apiScope(stack));
  return stack;
}

/** `/api/v1/secrets`: names only out, values only in. */
export function registerSecretRoutes(
  router: HttpRouter,
  secrets: SecretStore,
  deps: { flows?: Pick<FlowsService, 'referencing'>; onChange: (stack: string, name: string) => void },
): void {
  router.add(
    serve(api.getSecretsStack, async ({ params }) => {
      const stack = await stackScope(secrets, params.stack);
      const listed = await secrets.list(stack);
      const usedBy = await Promise.all(
        listed.map((secret) => deps.flows?.referencing(`secrets.${secret.name}`) ?? Promise.resolve([])),
      );
      return {
        stack,
        secrets: listed.map((secret, i) => ({ ...secret, used_by: usedBy[i] })),
        total: listed.length,
      };
    }),
  );

  router.add(
    serve(api.putSecretsStackName, async ({ params, body, principal }) => {
      const stack = await stackScope(secrets, params.stack);
      const name = checkSecretName(params.name);
      const existed = (await secrets.list(stack)).some((secret) => secret.name === name);
      await secrets.put(stack, name, body.value ?? '', principal?.name ?? 'anonymous');
      const updated = (await secrets.list(stack)).find((secret) => secret.name === name);
      deps.onChange(stack, name);
      return { stack, name, updated_at: updated?.updated_at ?? '', created: !existed };
    }),
  );

  router.add(
    serve(api.deleteSecretsStackName, async ({ params }) => {
      // A removed stack's values can still be removed: its name is not checked against the stacks.
      const stack = apiScope(params.stack);
      if (!(await secrets.remove(stack, params.name))) throw await secrets.missing(stack, params.name);
      deps.onChange(stack, params.name);
      return reply(204, undefined);
    }),
  );

  router.add(serve(api.postSecretsRotateKey, () => secrets.rotateKey()));
}
