import * as api from './api.js';
import { serve, STREAMED, type Cluster, type HttpRouter, type Store } from '@runner/plugin-sdk';

/**
 * The routes `runner db backup|vacuum|stats` call when a master holds the data directory.
 * A backup is answered as bytes, which the caller writes where it chooses: the API never writes
 * a file at a path a client names.
 */
export function registerDbRoutes(router: HttpRouter, store: Store, cluster: Cluster): void {
  router.add(
    serve(api.getClusterMasters, async () => ({
      self: cluster.masterId,
      shared: cluster.shared,
      masters: await cluster.masters(),
    })),
  );
  router.add(serve(api.getDbStats, () => store.stats()));
  router.add(
    serve(api.getDbBackup, async (request) => {
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
    }),
  );
  router.add(serve(api.postDbVacuum, () => store.vacuum()));
}
