import { isAbsolute } from 'node:path';
import { InvalidInputError, type HttpRouter, type HttpRequest, type Store } from '@runner/plugin-sdk';

function backupBody(request: HttpRequest): { output: string; compress: boolean } {
  const body = request.body as { output?: unknown; compress?: unknown } | undefined;
  if (typeof body !== 'object' || body === null) {
    throw new InvalidInputError('POST /db/backup needs a JSON body {output, compress}', { field: 'body' });
  }
  if (typeof body.output !== 'string' || !isAbsolute(body.output)) {
    // The master's working directory means nothing to the caller, so a relative path is refused.
    throw new InvalidInputError('output must be an absolute path on the master host', { field: 'output' });
  }
  if (body.compress !== undefined && typeof body.compress !== 'boolean') {
    throw new InvalidInputError('compress must be a boolean', { field: 'compress' });
  }
  return { output: body.output, compress: body.compress === true };
}

/** The routes `runner db backup|vacuum|stats` call when a master holds the data directory. */
export function registerDbRoutes(router: HttpRouter, store: Store): void {
  router.route('GET', '/db/stats', () => store.stats());
  router.route('POST', '/db/backup', (request) => {
    const { output, compress } = backupBody(request);
    return store.backup(output, { compress });
  });
  router.route('POST', '/db/vacuum', () => store.vacuum());
}
