import {
  InvalidInputError,
  NotFoundError,
  reply,
  type HttpRouter,
  type RunRequest,
  type RunStatus,
  type WorkflowEngine,
} from '@runner/plugin-sdk';
import { runToApi } from './api-shape.js';

const RUN_STATUSES: RunStatus[] = ['running', 'succeeded', 'failed', 'cancelled', 'interrupted'];
const BODY_KEYS = ['file', 'content', 'workflow_name', 'delegate_to', 'values', 'vars', 'dry_run', 'group', 'verbose'];

/** Checks a `POST /workflows/run` body; every error names the field. */
export function runRequestFromBody(body: unknown): RunRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new InvalidInputError('the body must be a JSON object', { field: 'body' });
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).find((k) => !BODY_KEYS.includes(k));
  if (unknown)
    throw new InvalidInputError(`unknown field "${unknown}" (known: ${BODY_KEYS.join(', ')})`, { field: unknown });
  const str = (key: string) => {
    if (b[key] === undefined) return undefined;
    if (typeof b[key] !== 'string' || b[key] === '')
      throw new InvalidInputError(`${key} must be a non-empty string`, { field: key });
    return b[key] as string;
  };
  const file = str('file');
  const content = str('content');
  if ((file === undefined) === (content === undefined))
    throw new InvalidInputError('give exactly one of file (a path on the master) or content (the workflow text)', {
      field: file ? 'content' : 'file',
    });
  const delegateTo = b.delegate_to;
  if (
    delegateTo !== undefined &&
    (!Array.isArray(delegateTo) || delegateTo.some((a) => typeof a !== 'string' || a === ''))
  ) {
    throw new InvalidInputError('delegate_to must be an array of agent names', { field: 'delegate_to' });
  }
  const vars = b.vars;
  if (
    vars !== undefined &&
    (vars === null ||
      typeof vars !== 'object' ||
      Array.isArray(vars) ||
      Object.values(vars).some((v) => typeof v !== 'string'))
  ) {
    throw new InvalidInputError('vars must be an object of strings', { field: 'vars' });
  }
  const values = b.values;
  if (
    values !== undefined &&
    (values === null ||
      typeof values !== 'object' ||
      Array.isArray(values) ||
      Object.values(values).some((v) => v === null || typeof v !== 'object' || Array.isArray(v)))
  ) {
    throw new InvalidInputError('values must be an object of agent name to object', { field: 'values' });
  }
  for (const key of ['dry_run', 'verbose']) {
    if (b[key] !== undefined && typeof b[key] !== 'boolean')
      throw new InvalidInputError(`${key} must be a boolean`, { field: key });
  }
  const workflowName = str('workflow_name');
  return {
    source: file !== undefined ? { file } : { content: content as string, name: workflowName },
    workflowName,
    group: str('group'),
    delegateTo: delegateTo as string[] | undefined,
    vars: vars as Record<string, string> | undefined,
    values: values as Record<string, Record<string, unknown>> | undefined,
    dryRun: b.dry_run === true,
    verbose: b.verbose === true,
    trigger: 'api',
  };
}

function intParam(query: Record<string, string>, key: string, fallback: number, max: number): number {
  const raw = query[key];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > max)
    throw new InvalidInputError(`${key} must be an integer from 0 to ${max}`, { field: key });
  return n;
}

export function registerRoutes(router: HttpRouter, engine: WorkflowEngine): void {
  router.route('POST', '/workflows/run', async (request) => {
    const { runId } = await engine.start(runRequestFromBody(request.body));
    const run = engine.get(runId);
    return reply(202, { id: runId, status: run?.status ?? 'running', workflow_name: run?.workflowName });
  });

  router.route('GET', '/executions', (request) => {
    const status = request.query.status;
    if (status !== undefined && !RUN_STATUSES.includes(status as RunStatus)) {
      throw new InvalidInputError(`status must be one of ${RUN_STATUSES.join(', ')}`, { field: 'status' });
    }
    const limit = intParam(request.query, 'limit', 50, 500);
    const offset = intParam(request.query, 'offset', 0, Number.MAX_SAFE_INTEGER);
    const { runs, total } = engine.list({
      workflow: request.query.workflow,
      status: status as RunStatus | undefined,
      since: request.query.since,
      limit,
      offset,
    });
    return { executions: runs.map(runToApi), total, limit, offset };
  });

  router.route('GET', '/executions/:id', (request) => {
    const run = engine.get(request.params.id);
    if (!run) throw new NotFoundError(`no execution with id "${request.params.id}"`);
    return runToApi(run);
  });
}
