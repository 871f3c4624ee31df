import { isRunnerError, RunnerError } from '@runner/plugin-sdk';
import { formatHostPort } from './address.js';

/** The one error body of the API; README.md documents it for clients. */
export interface ErrorBody {
  error: {
    code: string;
    message: string;
    /** The offending input field (dotted path), when there is one. */
    field?: string;
    details?: Record<string, unknown>;
  };
}

export interface ErrorAnswer {
  status: number;
  body: ErrorBody;
  /** True when the client got a generic message and the real error must be logged. */
  internal: boolean;
}

/** A method the path exists for, but not this one. */
export class MethodNotAllowedError extends RunnerError {
  readonly allow: string[];
  constructor(method: string, path: string, allow: string[]) {
    super('method_not_allowed', `${method} is not allowed on ${path}; allowed: ${allow.join(', ')}`, {
      status: 405,
      details: { allowed: allow },
    });
    this.allow = allow;
  }
}

/** The server could not bind its address; one line for the operator. */
export class ListenError extends RunnerError {
  constructor(host: string, port: number, cause: NodeJS.ErrnoException) {
    const why =
      cause.code === 'EADDRINUSE'
        ? 'address already in use (another runner master or program holds it; choose another with http.port or --http-port)'
        : cause.code === 'EACCES'
          ? 'permission denied (ports below 1024 need privileges)'
          : cause.code === 'EADDRNOTAVAIL'
            ? 'address not available on this machine (check http.bind_address)'
            : (cause.code ?? cause.message);
    super('listen_failed', `cannot listen on ${formatHostPort(host, port)}: ${why}`, {
      cause,
      details: { host, port },
    });
  }
}

/**
 * Maps any thrown value to a status and the documented body. A RunnerError's own message is
 * shown, since plugins write those for clients (a 503 saying which agent is unreachable is
 * useful). A plain 500, or anything that is not a RunnerError, gets only a generic message with
 * the request id: messages of unexpected errors carry paths, SQL or secrets.
 */
export function errorAnswer(error: unknown, requestId: string): ErrorAnswer {
  if (isRunnerError(error) && error.status >= 400 && error.status <= 599 && error.status !== 500) {
    const { field, ...rest } = error.details ?? {};
    const body: ErrorBody = { error: { code: error.code, message: error.message } };
    if (typeof field === 'string') body.error.field = field;
    if (Object.keys(rest).length > 0) body.error.details = rest;
    return { status: error.status, body, internal: false };
  }
  return {
    status: 500,
    body: {
      error: {
        code: isRunnerError(error) ? error.code : 'internal_error',
        message: `internal error (request id ${requestId})`,
        details: { request_id: requestId },
      },
    },
    internal: true,
  };
}
