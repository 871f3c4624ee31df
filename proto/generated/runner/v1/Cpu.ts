// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

export interface Cpu {
  cores?: number;
  usage_percent?: number | string;
  /**
   * 1, 5 and 15 minutes.
   */
  load_avg?: (number | string)[];
}

export interface Cpu__Output {
  cores: number;
  usage_percent: number;
  /**
   * 1, 5 and 15 minutes.
   */
  load_avg: number[];
}
