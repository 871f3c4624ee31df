import { STATUS_CODES } from 'node:http';
import type { PlainRoute, ResponseSpec, RouteDeclaration } from './http.js';
import { Kind, type TSchema } from '@sinclair/typebox';

/** The error body every route may answer with (errors.ts `ErrorBody`), as JSON Schema. */
export const ERROR_SCHEMA = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', description: 'machine-readable code, e.g. invalid_input, not_found' },
        message: { type: 'string', description: 'what went wrong, for people' },
        field: { type: 'string', description: 'the offending input field (dotted path), when there is one' },
        details: { type: 'object', additionalProperties: true },
      },
    },
  },
} as const;

const ERROR_RESPONSE = { $ref: '#/components/responses/Error' };

export interface OpenApiInput {
  version: string;
  apiPrefix: string;
  routes: readonly RouteDeclaration[];
  /** Routes outside the API prefix (`GET /metrics`); default none. */
  plain?: readonly Pick<PlainRoute, 'method' | 'path' | 'summary' | 'permission'>[];
}

/**
 * The OpenAPI 3.1 document of every declared route, built from the same schemas the router
 * validates with, so the document cannot drift from what the server accepts. The master serves it
 * (`GET /api/v1/openapi.json`) and the build writes it from the plugins' declarations
 * (scripts/openapi.mjs): the same function over the same declarations.
 */
export function buildOpenApi(input: OpenApiInput): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  for (const route of input.routes) {
    const path = toOpenApiPath(input.apiPrefix + route.path);
    const routeTags = route.tags ?? [firstSegment(route.path)];
    routeTags.forEach((t) => tags.add(t));
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route, routeTags);
  }
  for (const route of input.plain ?? []) {
    const path = toOpenApiPath(route.path);
    tags.add('system');
    (paths[path] ??= {})[route.method.toLowerCase()] = {
      // `Plain`: GET /metrics beside GET /api/v1/metrics would otherwise both be getMetrics.
      operationId: `${operationId(route.method, route.path)}Plain`,
      summary: route.summary,
      tags: ['system'],
      'x-permission': route.permission,
      security: security(route.permission),
      responses: { 200: { description: route.summary }, default: ERROR_RESPONSE },
    };
  }
  // Sorted by path: the document does not depend on the order in which plugins were set up.
  const sortedPaths = Object.fromEntries(Object.entries(paths).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return {
    openapi: '3.1.0',
    info: {
      title: 'runner',
      version: input.version,
      description:
        'The REST API of a runner master. Every error answers with the Error body; `x-permission` names what the caller must hold.',
    },
    servers: [{ url: '/' }],
    tags: [...tags].sort().map((name) => ({ name })),
    paths: sortedPaths,
    components: {
      schemas: { Error: ERROR_SCHEMA },
      responses: {
        Error: {
          description: 'the request failed; the body says why',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
      },
      securitySchemes: {
        basic: { type: 'http', scheme: 'basic' },
        bearer: { type: 'http', scheme: 'bearer', description: 'a JWT from POST /api/v1/auth/login or an API token' },
      },
    },
  };
}

function operation(route: RouteDeclaration, tags: string[]): Record<string, unknown> {
  const parameters = [...parametersOf(route.params, 'path'), ...parametersOf(route.query, 'query')];
  const op: Record<string, unknown> = {
    operationId: operationId(route.method, route.path),
    summary: route.summary,
    tags,
    'x-permission': route.permission,
    security: security(route.permission),
    responses: responsesOf(route.responses),
  };
  if (route.description) op.description = route.description;
  if (parameters.length > 0) op.parameters = parameters;
  if (route.body) {
    const content: Record<string, unknown> = { 'application/json': { schema: plain(route.body) } };
    if (route.formField)
      content['application/x-www-form-urlencoded'] = {
        schema: {
          type: 'object',
          required: [route.formField],
          properties: { [route.formField]: { type: 'string', description: 'the JSON body, as text' } },
        },
      };
    op.requestBody = { required: true, content };
  }
  return op;
}

function responsesOf(responses: Record<number, ResponseSpec>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, spec] of Object.entries(responses)) {
    const description = STATUS_CODES[Number(status)] ?? `status ${status}`;
    if (isSchema(spec)) {
      out[status] = { description, content: { 'application/json': { schema: plain(spec) } } };
    } else if (spec.schema || spec.contentType) {
      const schema = spec.schema ? plain(spec.schema) : { type: 'string' };
      out[status] = {
        description: spec.description,
        content: { [spec.contentType ?? 'application/json']: { schema } },
      };
    } else {
      out[status] = { description: spec.description };
    }
  }
  out.default = ERROR_RESPONSE;
  return out;
}

function parametersOf(schema: TSchema | undefined, where: 'path' | 'query'): unknown[] {
  if (!schema) return [];
  const properties = (schema.properties ?? {}) as Record<string, TSchema>;
  const required = new Set<string>((schema.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, property]) => {
    const parameter: Record<string, unknown> = {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      schema: plain(property),
    };
    if (typeof property.description === 'string') parameter.description = property.description;
    return parameter;
  });
}

/** A TypeBox schema carries its Kind symbol; a `{ description, contentType }` descriptor does not. */
function isSchema(spec: ResponseSpec): spec is TSchema {
  return Kind in spec;
}

/** A schema without TypeBox's symbol keys, as it appears in the JSON document. */
function plain(schema: TSchema): unknown {
  return JSON.parse(JSON.stringify(schema));
}

function security(permission: string): unknown[] {
  return permission === 'public' ? [] : [{ basic: [] }, { bearer: [] }];
}

/** `/agents/:name/exec` to `/agents/{name}/exec`. */
export function toOpenApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function firstSegment(path: string): string {
  return path.split('/').filter(Boolean)[0] ?? 'api';
}

/** `GET /agents/:name/metrics` to `getAgentsNameMetrics`: stable and unique per method and path. */
function operationId(method: string, path: string): string {
  const words = path
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1));
  return method.toLowerCase() + words.join('');
}
