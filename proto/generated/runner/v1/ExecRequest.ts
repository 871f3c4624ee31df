// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

export interface ExecRequest {
  /**
   * Run through `/bin/sh -c` when set ...
   */
  command?: string;
  /**
   * ... otherwise run argv[0] with these arguments and no shell.
   */
  argv?: string[];
  cwd?: string;
  /**
   * 0: the agent's default (config agent.exec_timeout).
   */
  timeout_ms?: number;
}

export interface ExecRequest__Output {
  /**
   * Run through `/bin/sh -c` when set ...
   */
  command: string;
  /**
   * ... otherwise run argv[0] with these arguments and no shell.
   */
  argv: string[];
  cwd: string;
  /**
   * 0: the agent's default (config agent.exec_timeout).
   */
  timeout_ms: number;
}
