import { Type } from '@runner/plugin-sdk/schema';

const Commit = Type.Object({
  id: Type.String({ description: 'the commit id' }),
  author: Type.String({ description: 'Name <email>' }),
  message: Type.String({ description: "the commit message's first line" }),
});
const ChangeKind = Type.Union([Type.Literal('added'), Type.Literal('changed'), Type.Literal('removed')]);
const ItemChange = Type.Object({ name: Type.String(), change: ChangeKind });

export const StatusSchema = Type.Object({
  configured: Type.Boolean({ description: 'false while gitops.url is empty' }),
  url: Type.String(),
  branch: Type.String(),
  path: Type.String({ description: 'the directory inside the repository holding the workflows' }),
  applied: Type.Union([
    Type.Object({
      commit: Type.String(),
      author: Type.String(),
      message: Type.String(),
      at: Type.String({ description: 'ISO 8601 UTC of the sync' }),
      by: Type.String({ description: 'who synced: a user, `webhook` or `interval`' }),
    }),
    Type.Null(),
  ]),
  syncing: Type.Union([Type.Object({ master: Type.String(), by: Type.String(), since: Type.String() }), Type.Null()]),
  drift: Type.Array(
    Type.Object({
      flow: Type.String(),
      path: Type.String(),
      applied_version: Type.Integer(),
      current_version: Type.Union([Type.Integer(), Type.Null()], { description: 'null: deleted since the sync' }),
      edits: Type.Array(
        Type.Object({
          version: Type.Integer(),
          author: Type.String(),
          message: Type.String(),
          created_at: Type.String(),
        }),
      ),
    }),
    { description: 'flows changed outside git since the last sync (the next sync overwrites them)' },
  ),
});

export const DiffSchema = Type.Object({
  commit: Commit,
  applied_commit: Type.Union([Type.String(), Type.Null()]),
  flows: Type.Array(
    Type.Object({
      name: Type.String(),
      path: Type.String({ description: 'its file in the repository' }),
      change: ChangeKind,
      current_version: Type.Union([Type.Integer(), Type.Null()]),
      unified: Type.String({ description: "unified diff from the flow's current YAML to the repository's" }),
    }),
  ),
  hooks: Type.Array(ItemChange),
  schedules: Type.Array(ItemChange),
  problems: Type.Array(Type.String(), {
    description: 'file:line:column problems; while there is one, a sync changes nothing',
  }),
});

export const SyncSchema = Type.Object({
  commit: Commit,
  previous_commit: Type.Union([Type.String(), Type.Null()]),
  flows: Type.Array(
    Type.Object({
      name: Type.String(),
      change: ChangeKind,
      version: Type.Union([Type.Integer(), Type.Null()], { description: 'the version the sync made' }),
    }),
  ),
  hooks: Type.Array(ItemChange),
  schedules: Type.Array(ItemChange),
});

export const WebhookBody = Type.Object(
  { ref: Type.Optional(Type.String({ description: 'refs/heads/<branch> of a push: other branches are ignored' })) },
  { additionalProperties: true },
);

export const WebhookSchema = Type.Object({
  outcome: Type.Union([Type.Literal('syncing'), Type.Literal('ignored')]),
  detail: Type.String(),
});
