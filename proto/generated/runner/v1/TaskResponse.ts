// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

export interface TaskResponse {
  /**
   * The script returned nothing or true.
   */
  success?: boolean;
  /**
   * The script's message (second return value) or the error; empty when none.
   */
  message?: string;
  /**
   * JSON object of the outputs (third return value); empty when none.
   */
  outputs_json?: string;
  /**
   * Seconds the script ran.
   */
  duration?: number | string;
}

export interface TaskResponse__Output {
  /**
   * The script returned nothing or true.
   */
  success: boolean;
  /**
   * The script's message (second return value) or the error; empty when none.
   */
  message: string;
  /**
   * JSON object of the outputs (third return value); empty when none.
   */
  outputs_json: string;
  /**
   * Seconds the script ran.
   */
  duration: number;
}
