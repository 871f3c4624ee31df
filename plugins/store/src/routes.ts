import { defineRoute, Permissions, STREAMED, type HttpRouter, type Store } from '@runner/plugin-sdk';
import { Type } from '@runner/plugin-sdk/schema';

const StatsSchema = Type.Object({
  path: Type.String(),
  snapshotBytes: Type.Integer(),
  journalBytes: Type.Integer(),
  journalRecords: Type.Integer(),
  tables: Type.Array(Type.Object({ name: Type.String(), rows: Type.Integer() })),
  pageCount: Type.Integer(),
  pageSize: Type.Integer(),
  lastSnapshotAt: Type.Union([Type.String(), Type.Null()]),
  retention: Type.Array(
    Type.Object({
      name: Type.String({ description: 'what is kept: executions, task logs, ...' }),
      rule: Type.String({ description: 'the rule in words, with its config keys' }),
      kept: Type.Integer({ description: 'how many are kept now' }),
      oldest: Type.Optional(Type.String({ description: 'the oldest kept (ISO 8601)' })),
      lastPrunedAt: Type.Union([Type.String(), Type.Null()], { description: 'when the last pass ended' }),
      lastRemoved: Type.Integer({ description: 'removed by the last pass' }),
      lastError: Type.Optional(Type.String({ description: 'why the last pass failed' })),
    }),
    { description: 'what each retention policy keeps (pruned in the background: store.retention_interval)' },
  ),
});

const BackupQuery = Type.Object(
  { compress: Type.Optional(Type.Boolean({ description: 'gzip the image (default false)' })) },
  { additionalProperties: false },
);

/**
 * The routes `runner db backup|vacuum|stats` call when a master holds the data directory.
 * A backup is answered as bytes, which the caller writes where it chooses: the API never writes
 * a file at a path a client names.
 */
export function registerDbRoutes(router: HttpRouter, store: Store): void {
  router.add(
    defineRoute({
      method: 'GET',
      path: '/db/stats',
      summary: "the store's size, journal and row counts",
      tags: ['db'],
      permission: Permissions.systemAdmin,
      responses: { 200: StatsSchema },
      handler: () => store.stats(),
    }),
  );
  router.add(
    defineRoute({
      method: 'GET',
      path: '/db/backup',
      summary: 'a consistent copy of the whole database',
      tags: ['db'],
      permission: Permissions.systemAdmin,
      query: BackupQuery,
      responses: {
        200: { description: 'the SQLite image (gzip with compress=true)', contentType: 'application/octet-stream' },
      },
      handler: async (request) => {
        const compress = request.query.compress === true;
        const image = await store.backupImage({ compress });
        const { res } = request.raw;
        res.writeHead(200, {
          'content-type': compress ? 'application/gzip' : 'application/vnd.sqlite3',
          'content-length': String(image.length),
          'content-disposition': `attachment; filename="runner-backup.db${compress ? '.gz' : ''}"`,
        });
        res.end(image);
        return STREAMED;
      },
    }),
  );
  router.add(
    defineRoute({
      method: 'POST',
      path: '/db/vacuum',
      summary: 'compact the database',
      tags: ['db'],
      permission: Permissions.systemAdmin,
      responses: { 200: Type.Object({ bytesBefore: Type.Integer(), bytesAfter: Type.Integer() }) },
      handler: () => store.vacuum(),
    }),
  );
}
