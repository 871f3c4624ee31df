// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

import type {
  ControlAction as _runner_v1_ControlAction,
  ControlAction__Output as _runner_v1_ControlAction__Output,
} from '../../runner/v1/ControlAction.js';

export interface ControlRequest {
  action?: _runner_v1_ControlAction;
}

export interface ControlRequest__Output {
  action: _runner_v1_ControlAction__Output;
}
