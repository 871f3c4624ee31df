// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

export interface TaskRequest {
  run_id?: string;
  workflow?: string;
  /**
   * The task's name in the workflow file.
   */
  task?: string;
  /**
   * Display name of this execution unit, e.g. `per-host[web-1]`.
   */
  unit?: string;
  /**
   * The rendered Lua 5.3 script.
   */
  script?: string;
  /**
   * JSON object of the globals the script reads: vars, values (this agent's entry), item,
   * loop_index, task, workflow, tasks, env.
   */
  globals_json?: string;
  dry_run?: boolean;
  /**
   * 0: no limit.
   */
  timeout_ms?: number;
  attempt?: number;
  /**
   * MiB the script may use: the workflow's top-level `memory_limit:`. 0: the agent's default (the
   * Lua runtime's 512 MiB). An agent built before this field ignores it and keeps its default.
   */
  memory_limit_mib?: number;
}

export interface TaskRequest__Output {
  run_id: string;
  workflow: string;
  /**
   * The task's name in the workflow file.
   */
  task: string;
  /**
   * Display name of this execution unit, e.g. `per-host[web-1]`.
   */
  unit: string;
  /**
   * The rendered Lua 5.3 script.
   */
  script: string;
  /**
   * JSON object of the globals the script reads: vars, values (this agent's entry), item,
   * loop_index, task, workflow, tasks, env.
   */
  globals_json: string;
  dry_run: boolean;
  /**
   * 0: no limit.
   */
  timeout_ms: number;
  attempt: number;
  /**
   * MiB the script may use: the workflow's top-level `memory_limit:`. 0: the agent's default (the
   * Lua runtime's 512 MiB). An agent built before this field ignores it and keeps its default.
   */
  memory_limit_mib: number;
}
