import {
  InvalidInputError,
  RunnerError,
  type RunInputs,
  type RunInputsContributor,
  type SecretsService,
} from '@runner/plugin-sdk';
import type { StackStore } from './stack-store.js';

/** Triggers with a person behind them, who is asked to confirm a production run; schedules, hooks and flows were set up by one. */
const CONFIRMED_BY_PERSON = new Set(['cli', 'api', undefined]);

/**
 * A stack's run inputs (the engine's RunInputsContributor seam): refused when the stack is
 * inactive, or production and not confirmed; else its variables (over the workflow's declared
 * vars, under --var), the `stack` global (`stack.name`, `stack.environment`, `stack.vars.<key>`),
 * and its secrets (`secrets.<name>`, each masked by the redactor while the run lives). Only runs
 * that name a stack are asked: the rest cost one `wants` call.
 */
export function stackRunInputs(stacks: StackStore, secrets: SecretsService | undefined): RunInputsContributor {
  return {
    name: 'stacks',
    wants: (request) => request.stack !== undefined,
    async contribute({ request }): Promise<RunInputs> {
      const stack = stacks.require(request.stack as string);
      if (!stack.active)
        throw new InvalidInputError(
          `stack "${stack.name}" is inactive: runs naming it are refused (runner stack update ${stack.name} --active true)`,
          { field: 'stack' },
        );
      if (stack.environment === 'production' && request.confirm !== true && CONFIRMED_BY_PERSON.has(request.trigger))
        throw new RunnerError(
          'confirmation_required',
          `stack "${stack.name}" is production: confirm the run (runner run --yes, "confirm": true in the request body, or the dialog in the web UI)`,
          { status: 409, details: { stack: stack.name } },
        );
      const values = secrets ? await secrets.revealAll(stack.name) : {};
      return {
        vars: stack.variables,
        globals: {
          stack: { name: stack.name, environment: stack.environment, vars: { ...stack.variables } },
          secrets: values,
        },
        strict: { secrets: { keys: Object.keys(values), what: `stack ${stack.name}` } },
        secrets: Object.values(values),
      };
    },
  };
}
