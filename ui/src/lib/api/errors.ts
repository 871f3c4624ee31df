/** An API call that failed, with the API's own message (the error body every route answers with). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly field?: string,
    /** What the master added (`line` and `column` of a script that does not compile). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

interface ErrorBody {
  error?: { code?: string; message?: string; field?: string; details?: { field?: string } & Record<string, unknown> };
}

/** The ApiError for a failed answer: the body's message, else the status line. */
export function apiError(body: unknown, response: Response): ApiError {
  const e = (body as ErrorBody | undefined)?.error;
  const message = e?.message ?? `${response.status} ${response.statusText || 'request failed'}`;
  return new ApiError(
    message,
    response.status,
    e?.code ?? `http_${response.status}`,
    e?.field ?? e?.details?.field,
    e?.details,
  );
}

/** What to show for any thrown value. */
export function messageOf(error: unknown): string {
  if (error instanceof ApiError) return error.field ? `${error.message} (field ${error.field})` : error.message;
  if (error instanceof TypeError) return 'cannot reach the master: is it running?';
  return error instanceof Error ? error.message : String(error);
}
