import { Type } from '@runner/plugin-sdk/schema';
import { BEHAVIORS, FLOW_NAME_RULE, MAX_DESCRIPTION, MAX_MESSAGE, MAX_TAGS } from './flow-store.js';

/**
 * Request and response schemas of /api/v1/flows and /api/v1/workflows. Names are checked by the
 * store (the rule said in words) rather than by a schema pattern, whose message would show a
 * regular expression.
 */
const Name = Type.String({ minLength: 1, description: `flow name: ${FLOW_NAME_RULE}` });
const Yaml = Type.String({ minLength: 1, description: 'the workflow YAML, kept byte for byte' });
const Tags = Type.Array(Type.String({ minLength: 1 }), {
  maxItems: MAX_TAGS,
  description: 'tags (lower-cased, sorted)',
});
const Description = Type.String({ maxLength: MAX_DESCRIPTION, description: 'free text for people' });
const Message = Type.String({ maxLength: MAX_MESSAGE, description: "the version's message (what changed and why)" });
const Vars = Type.Record(Type.String(), Type.String(), { description: "merged over the workflow's vars (--var k=v)" });

export const ConcurrencySchema = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, description: 'runs of the flow at once, across every master' }),
    behavior: Type.Union(
      BEHAVIORS.map((b) => Type.Literal(b)),
      {
        description:
          'at the limit: queue (start when a run ends), skip (start nothing), cancel_oldest (cancel the oldest run, start this one)',
      },
    ),
  },
  { additionalProperties: false },
);
const Concurrency = Type.Union([ConcurrencySchema, Type.Null()], { description: 'null: no limit' });

const Stats = Type.Object({
  executions: Type.Integer({ description: 'ended runs of the flow' }),
  succeeded: Type.Integer(),
  success_rate: Type.Union([Type.Number(), Type.Null()], { description: '0..1; null before a run ended' }),
  average_duration: Type.Union([Type.Number(), Type.Null()], { description: 'seconds; null before a run ended' }),
  last_execution: Type.Union([
    Type.Object({ run_id: Type.String(), at: Type.String({ description: 'ISO 8601 UTC' }), status: Type.String() }),
    Type.Null(),
  ]),
});

const summaryFields = {
  name: Type.String(),
  description: Type.String(),
  tags: Type.Array(Type.String()),
  active: Type.Boolean({ description: 'only active flows run from schedules and hooks' }),
  version: Type.Integer({ description: "the current version's number" }),
  concurrency: Concurrency,
  stats: Stats,
  created_at: Type.String({ description: 'ISO 8601 UTC' }),
  updated_at: Type.String({ description: 'ISO 8601 UTC of the last change' }),
};
export const FlowSummarySchema = Type.Object(summaryFields);
export const FlowSchema = Type.Object({ ...summaryFields, yaml: Yaml });
export const FlowListSchema = Type.Object({ flows: Type.Array(FlowSummarySchema), total: Type.Integer() });

export const FlowParams = Type.Object({ name: Type.String({ minLength: 1, description: 'the flow name' }) });
export const VersionParams = Type.Object({
  name: Type.String({ minLength: 1, description: 'the flow name' }),
  version: Type.Integer({ minimum: 1, description: 'the version number' }),
});

export const FlowListQuery = Type.Object(
  {
    search: Type.Optional(Type.String({ description: 'part of the name, description or a tag (any case)' })),
    tag: Type.Optional(Type.String({ description: 'only flows with this tag' })),
    active: Type.Optional(Type.Boolean({ description: 'only active (true) or inactive (false) flows' })),
    limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);

export const CreateFlowBody = Type.Object(
  {
    name: Name,
    yaml: Yaml,
    description: Type.Optional(Description),
    tags: Type.Optional(Tags),
    active: Type.Optional(Type.Boolean({ description: 'default true' })),
    concurrency: Type.Optional(Concurrency),
    message: Type.Optional(Message),
  },
  { additionalProperties: false },
);

export const UpdateFlowBody = Type.Object(
  {
    yaml: Type.Optional(Yaml),
    base_version: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'the version this change started from: new YAML over a newer version is refused (409)',
      }),
    ),
    message: Type.Optional(Message),
    description: Type.Optional(Description),
    tags: Type.Optional(Tags),
    active: Type.Optional(Type.Boolean()),
    concurrency: Type.Optional(Concurrency),
  },
  { additionalProperties: false },
);

const VersionFields = {
  version: Type.Integer(),
  author: Type.String({ description: 'who saved it' }),
  message: Type.String(),
  created_at: Type.String({ description: 'ISO 8601 UTC' }),
};
export const VersionListSchema = Type.Object({
  versions: Type.Array(Type.Object(VersionFields), { description: 'newest first' }),
  total: Type.Integer(),
});
export const VersionSchema = Type.Object({ ...VersionFields, yaml: Yaml });

export const DiffQuery = Type.Object(
  {
    from: Type.Optional(Type.Integer({ minimum: 1, description: 'default: the version before `to`' })),
    to: Type.Optional(Type.Integer({ minimum: 1, description: 'default: the current version' })),
  },
  { additionalProperties: false },
);
export const DiffSchema = Type.Object({
  from: Type.Integer(),
  to: Type.Integer(),
  unified: Type.String({ description: 'the unified diff' }),
  added: Type.Integer(),
  removed: Type.Integer(),
  lines: Type.Array(
    Type.Object({
      kind: Type.Union([Type.Literal('same'), Type.Literal('added'), Type.Literal('removed')]),
      old: Type.Optional(Type.Integer({ description: 'line number in `from`' })),
      new: Type.Optional(Type.Integer({ description: 'line number in `to`' })),
      text: Type.String(),
    }),
    { description: 'every line, numbered on its sides: what a side-by-side view draws' },
  ),
});

export const RestoreBody = Type.Object(
  {
    version: Type.Integer({ minimum: 1, description: 'the version whose YAML becomes a new version' }),
    base_version: Type.Optional(
      Type.Integer({ minimum: 1, description: 'as for PUT: refused (409) when older than the current' }),
    ),
  },
  { additionalProperties: false },
);
export const CloneBody = Type.Object({ new_name: Name }, { additionalProperties: false });

export const RunBody = Type.Object(
  {
    vars: Type.Optional(Vars),
    version: Type.Optional(Type.Integer({ minimum: 1, description: 'run this version (default the current one)' })),
    stack: Type.Optional(
      Type.String({ minLength: 1, description: "the stack the run reads (default the flow's stack:)" }),
    ),
    confirm: Type.Optional(Type.Boolean({ description: 'true: a run on a production stack is confirmed' })),
  },
  { additionalProperties: false },
);
export const RunAnswerSchema = Type.Object({
  flow: Type.String(),
  version: Type.Integer({ description: 'the version run (or queued)' }),
  outcome: Type.Union([Type.Literal('started'), Type.Literal('queued'), Type.Literal('skipped')], {
    description: "what the flow's concurrency made of the start",
  }),
  id: Type.Optional(Type.String({ description: 'the run id (started): GET /executions/:id' })),
  queue_id: Type.Optional(Type.String({ description: 'the queued start (queued)' })),
  reason: Type.Optional(Type.String({ description: 'why nothing ran (skipped)' })),
  inactive: Type.Boolean({ description: 'the flow is inactive: a manual run, recorded as such' }),
});

const VersionWithYaml = Type.Object({ ...VersionFields, yaml: Yaml });
export const ExportedFlowSchema = Type.Object(
  {
    name: Type.String(),
    description: Type.String(),
    tags: Type.Array(Type.String()),
    active: Type.Boolean(),
    concurrency: Concurrency,
    version: Type.Integer(),
    yaml: Yaml,
    versions: Type.Optional(Type.Array(VersionWithYaml, { description: 'oldest first; with history only' })),
  },
  { additionalProperties: false },
);
export const ExportDocumentSchema = Type.Object(
  {
    format: Type.Literal('runner-flows'),
    format_version: Type.Literal(1),
    exported_at: Type.String(),
    flows: Type.Array(ExportedFlowSchema),
  },
  { additionalProperties: false, description: 'an export file: what POST /flows/import takes back' },
);
export const ExportBody = Type.Object(
  {
    names: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'default: every flow' })),
    history: Type.Optional(Type.Boolean({ description: 'every version, not only the current one' })),
  },
  { additionalProperties: false },
);
export const ImportAnswerSchema = Type.Object({ imported: Type.Array(Type.String()) });

export const WorkflowListSchema = Type.Object({
  workflows: Type.Array(
    Type.Object({
      name: Type.String(),
      kind: Type.Union([Type.Literal('flow'), Type.Literal('file')]),
      path: Type.Optional(Type.String({ description: 'a file: its path under the workflow directories' })),
      active: Type.Optional(Type.Boolean({ description: 'a flow: whether it is active' })),
      version: Type.Optional(Type.Integer({ description: 'a flow: its current version' })),
      description: Type.Optional(Type.String()),
    }),
  ),
  total: Type.Integer(),
});
