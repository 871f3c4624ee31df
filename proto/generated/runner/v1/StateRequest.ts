// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

/**
 * The Lua `state` module on an agent keeps nothing itself: each call travels to the master, which
 * runs it against its store with the scopes and semantics it has there. The master serves only a
 * task it delegated to this agent and still waits for (ExecuteTask started, no answer yet), and
 * takes the workflow, the task and dry-run from its own record of that task, never from the agent.
 */
export interface StateRequest {
  /**
   * The run and task (its name in the workflow file) the calling script belongs to.
   */
  run_id?: string;
  task?: string;
  /**
   * get, keys, set, changed or clear.
   */
  operation?: string;
  /**
   * workflow, task or global.
   */
  scope?: string;
  /**
   * Empty for keys.
   */
  key?: string;
  /**
   * set and changed: the value as canonical JSON (the agent checked it); empty for nil, which clears.
   */
  value_json?: string;
}

/**
 * The Lua `state` module on an agent keeps nothing itself: each call travels to the master, which
 * runs it against its store with the scopes and semantics it has there. The master serves only a
 * task it delegated to this agent and still waits for (ExecuteTask started, no answer yet), and
 * takes the workflow, the task and dry-run from its own record of that task, never from the agent.
 */
export interface StateRequest__Output {
  /**
   * The run and task (its name in the workflow file) the calling script belongs to.
   */
  run_id: string;
  task: string;
  /**
   * get, keys, set, changed or clear.
   */
  operation: string;
  /**
   * workflow, task or global.
   */
  scope: string;
  /**
   * Empty for keys.
   */
  key: string;
  /**
   * set and changed: the value as canonical JSON (the agent checked it); empty for nil, which clears.
   */
  value_json: string;
}
