// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

export const ControlAction = {
  CONTROL_ACTION_UNSPECIFIED: 'CONTROL_ACTION_UNSPECIFIED',
  /**
   * The agent process re-executes itself and registers again.
   */
  CONTROL_ACTION_RESTART: 'CONTROL_ACTION_RESTART',
  /**
   * The agent process stops.
   */
  CONTROL_ACTION_STOP: 'CONTROL_ACTION_STOP',
} as const;

export type ControlAction =
  | 'CONTROL_ACTION_UNSPECIFIED'
  | 0
  /**
   * The agent process re-executes itself and registers again.
   */
  | 'CONTROL_ACTION_RESTART'
  | 1
  /**
   * The agent process stops.
   */
  | 'CONTROL_ACTION_STOP'
  | 2;

export type ControlAction__Output = (typeof ControlAction)[keyof typeof ControlAction];
