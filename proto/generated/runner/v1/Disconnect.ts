// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

/**
 * Why the master ends a session.
 */
export interface Disconnect {
  reason?: string;
  /**
   * False when the agent must not reconnect (removed from the master, or replaced by a newer
   * connection of an agent with the same name); the agent process then ends.
   */
  reconnect?: boolean;
}

/**
 * Why the master ends a session.
 */
export interface Disconnect__Output {
  reason: string;
  /**
   * False when the agent must not reconnect (removed from the master, or replaced by a newer
   * connection of an agent with the same name); the agent process then ends.
   */
  reconnect: boolean;
}
