import {
  isRunnerError,
  type Logger,
  type LuaValue,
  type StateOperation,
  type StateScope,
  type StateService,
} from '@runner/plugin-sdk';
import type { AgentMessage__Output, StateResponse } from '@runner/proto';
import type { AgentSession } from './session.js';

/**
 * Serves an agent's `state` request (runner.proto, StateRequest) with the master's state service.
 * The agent names the run and task its script runs in; the master serves it only when it delegated
 * that task to this very session and still waits for its answer, and then uses its own record of
 * the task (workflow, task, dry-run): an agent cannot reach the state of a run it does not run, and
 * cannot pass itself off as another workflow. The answer carries the request's call_id.
 */
export function serveState(
  session: AgentSession,
  message: AgentMessage__Output,
  service: StateService | undefined,
  logger: Logger,
): void {
  const request = message.state;
  if (!request) return;
  const answer = (body: StateResponse) => session.send({ call_id: message.call_id, state_result: body });
  const refuse = (code: string, text: string) => answer({ failed: { code, message: text } });
  const fn = `state.${request.operation || '?'}`;
  if (!service) return refuse('state_unavailable', `${fn}: this master keeps no state (it runs without a store)`);

  const task = session.runningTask(request.run_id, request.task);
  if (!task) {
    const why = `task "${request.task}" of run ${request.run_id || '(none)'} is not running on agent ${session.name}; an agent reaches state only from a task delegated to it, while it runs`;
    logger.warn(`refused a state request of agent ${session.name}: ${why}`, {
      agent: session.name,
      run_id: request.run_id,
    });
    return refuse('permission_denied', `${fn}: ${why}`);
  }
  let value: LuaValue | undefined;
  if (request.value_json) {
    try {
      value = JSON.parse(request.value_json) as LuaValue;
    } catch {
      return refuse('invalid_input', `${fn}: the value sent by the agent is not JSON`);
    }
  }
  const { operation, scope, key } = request;
  logger.debug(`agent ${session.name}: ${fn} ${JSON.stringify(key)} (${scope} scope) for run ${task.runId}`, {
    agent: session.name,
    run_id: task.runId,
  });
  // A check may throw at once, a write answers later: both end in the promise.
  Promise.resolve()
    .then(() =>
      service.perform(
        { operation: operation as StateOperation, scope: scope as StateScope, key, value },
        { workflow: task.workflow, task: task.task, runId: task.runId, dryRun: task.dryRun },
      ),
    )
    .then(
      (result) =>
        answer({
          value_json: result.value === undefined || result.value === null ? '' : JSON.stringify(result.value),
          keys: result.keys ?? [],
          changed: result.changed ?? false,
        }),
      (error: unknown) =>
        refuse(isRunnerError(error) ? error.code : 'internal', error instanceof Error ? error.message : String(error)),
    );
}
