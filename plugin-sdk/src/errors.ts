/**
 * Errors every plugin may throw. Each has a stable `code`; the HTTP-shaped kinds carry the status
 * the REST plugin answers with, so a plugin never deals with HTTP to report bad input.
 */
export class RunnerError extends Error {
  /** Stable, snake_case identifier that clients may match on. */
  readonly code: string;
  /** HTTP status the REST plugin maps this error to. */
  readonly status: number;
  /** Extra, non-secret facts about the failure (field name, file position, agent...). */
  readonly details?: Record<string, unknown>;

  constructor(
    code: string,
    message: string,
    options: { status?: number; cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = options.status ?? 500;
    this.details = options.details;
  }
}

/** Input that fails validation; `field` names the offending field (dotted path) when there is one. */
export class InvalidInputError extends RunnerError {
  constructor(message: string, options: { field?: string; cause?: unknown; details?: Record<string, unknown> } = {}) {
    super('invalid_input', message, {
      status: 400,
      cause: options.cause,
      details: options.field === undefined ? options.details : { field: options.field, ...options.details },
    });
  }
}

export class NotFoundError extends RunnerError {
  constructor(message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super('not_found', message, { status: 404, ...options });
  }
}

export class ConflictError extends RunnerError {
  constructor(message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super('conflict', message, { status: 409, ...options });
  }
}

export class UnauthorizedError extends RunnerError {
  constructor(message = 'authentication required', options: { cause?: unknown } = {}) {
    super('unauthorized', message, { status: 401, ...options });
  }
}

export class ForbiddenError extends RunnerError {
  constructor(message = 'not allowed', options: { cause?: unknown } = {}) {
    super('forbidden', message, { status: 403, ...options });
  }
}

export class PayloadTooLargeError extends RunnerError {
  constructor(message: string, options: { details?: Record<string, unknown> } = {}) {
    super('payload_too_large', message, { status: 413, ...options });
  }
}

export class UnsupportedMediaTypeError extends RunnerError {
  constructor(message: string) {
    super('unsupported_media_type', message, { status: 415 });
  }
}

/** True for any error carrying a stable code, whichever copy of the SDK created it. */
export function isRunnerError(error: unknown): error is RunnerError {
  return (
    error instanceof Error &&
    typeof (error as Partial<RunnerError>).code === 'string' &&
    typeof (error as Partial<RunnerError>).status === 'number'
  );
}
