// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

export interface Registered {
  master_version?: string;
  /**
   * Seconds between the agent's heartbeats; the master's setting wins over the agent's.
   */
  heartbeat_interval?: number | string;
  /**
   * Seconds of silence after which either side gives the other up.
   */
  heartbeat_timeout?: number | string;
  /**
   * `host:port` the master sees the agent connect from.
   */
  address?: string;
  /**
   * Set once, when the join token enrolled this name: the agent's own credential, to store
   * privately and present in `x-runner-agent-credential` on every later connection. Empty when
   * the agent connected with its credential.
   */
  credential?: string;
}

export interface Registered__Output {
  master_version: string;
  /**
   * Seconds between the agent's heartbeats; the master's setting wins over the agent's.
   */
  heartbeat_interval: number;
  /**
   * Seconds of silence after which either side gives the other up.
   */
  heartbeat_timeout: number;
  /**
   * `host:port` the master sees the agent connect from.
   */
  address: string;
  /**
   * Set once, when the join token enrolled this name: the agent's own credential, to store
   * privately and present in `x-runner-agent-credential` on every later connection. Empty when
   * the agent connected with its credential.
   */
  credential: string;
}
