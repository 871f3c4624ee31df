import { InvalidInputError, STREAMED, type HttpRouter, type HttpRequest, type Store } from '@runner/plugin-sdk';

function compressQuery(request: HttpRequest): boolean {
  const value = request.query.compress;
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new InvalidInputError(`compress must be true or false, got ${JSON.stringify(value)}`, { field: 'compress' });
}

/**
 * The routes `runner db backup|vacuum|stats` call when a master holds the data directory.
 * A backup is answered as bytes, which the caller writes where it chooses: the API never writes
 * a file at a path a client names.
 */
export function registerDbRoutes(router: HttpRouter, store: Store): void {
  router.route('GET', '/db/stats', () => store.stats());
  router.route('GET', '/db/backup', async (request) => {
    const compress = compressQuery(request);
    const image = await store.backupImage({ compress });
    const { res } = request.raw;
    res.writeHead(200, {
      'content-type': compress ? 'application/gzip' : 'application/vnd.sqlite3',
      'content-length': String(image.length),
      'content-disposition': `attachment; filename="runner-backup.db${compress ? '.gz' : ''}"`,
    });
    res.end(image);
    return STREAMED;
  });
  router.route('POST', '/db/vacuum', () => store.vacuum());
}
