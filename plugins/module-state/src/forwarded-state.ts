import { RunnerError, type StateForwarder, type StateService } from '@runner/plugin-sdk';
import { checkKey, encodeValue } from './request.js';

/**
 * The state service of an agent: each call goes to the master, which runs it on its store. Keys
 * and values are checked here first, so a bad argument fails with the same message as on the
 * master without a round trip.
 */
export function createForwardedState(forwarder: StateForwarder): StateService {
  return {
    async perform(request, caller, signal) {
      const { operation } = request;
      if (caller.runId === undefined) {
        throw new RunnerError(
          'state_unavailable',
          `state.${operation}: on an agent, state works only in a task the master delegated here (it lives in the master's store)`,
        );
      }
      if (operation !== 'keys') checkKey(operation, request.key);
      if (operation === 'set' || operation === 'changed') encodeValue(operation, request.value);
      return forwarder.forward(request, { runId: caller.runId, task: caller.task }, signal);
    },
  };
}

/** Neither a store nor a master to forward to: every call says why rather than keep state that would not last. */
export function unavailableState(): StateService {
  return {
    perform: (request) =>
      Promise.reject(
        new RunnerError(
          'state_unavailable',
          `state.${request.operation}: no durable store in this process and no master to forward to; run the workflow on the master or embedded, or delegate the task to an agent`,
        ),
      ),
  };
}
