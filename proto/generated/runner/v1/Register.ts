// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

export interface Register {
  /**
   * The protocol revision the agent speaks; this file is revision 1.
   */
  protocol_version?: number;
  /**
   * Unique name of the agent: letters, digits, `.`, `_`, `-`; at most 63 characters.
   */
  name?: string;
  /**
   * The agent's runner version.
   */
  version?: string;
  hostname?: string;
  /**
   * e.g. "linux 6.1.0 x64".
   */
  os?: string;
  labels?: { [key: string]: string };
  /**
   * Lua modules the agent's runtime has.
   */
  modules?: string[];
  pid?: number;
  /**
   * Seconds the agent process has run.
   */
  uptime?: number | string;
}

export interface Register__Output {
  /**
   * The protocol revision the agent speaks; this file is revision 1.
   */
  protocol_version: number;
  /**
   * Unique name of the agent: letters, digits, `.`, `_`, `-`; at most 63 characters.
   */
  name: string;
  /**
   * The agent's runner version.
   */
  version: string;
  hostname: string;
  /**
   * e.g. "linux 6.1.0 x64".
   */
  os: string;
  labels: { [key: string]: string };
  /**
   * Lua modules the agent's runtime has.
   */
  modules: string[];
  pid: number;
  /**
   * Seconds the agent process has run.
   */
  uptime: number;
}
