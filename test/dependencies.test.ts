// Issue 19, item 7: no runtime dependency may need a newer Node than the one the README and the
// root package.json state (`npm ci` printed EBADENGINE for ldapts@9, which needs Node 22). Read
// from package-lock.json, which records each installed package's `engines` and whether only
// development needs it: what npm ci installs, without running it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; dev?: boolean; devOptional?: boolean; engines?: { node?: string } }>;
};
const stated = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } }).engines
  .node;

/** The oldest Node the project states it runs on (`>=20.19` gives 20.19.0). */
const oldest = semver.minVersion(stated)!.version;

describe('dependencies fit the stated Node', () => {
  it('the README states the same Node as package.json', () => {
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain(`Node.js ${oldest.replace(/\.0$/, '')} or newer`);
  });

  it('every runtime dependency (not only for development) runs on that Node', () => {
    const needsNewer = Object.entries(lock.packages)
      .filter(([path, meta]) => path.includes('node_modules/') && !meta.dev && !meta.devOptional)
      .filter(([, meta]) => meta.engines?.node && !semver.satisfies(oldest, meta.engines.node))
      .map(
        ([path, meta]) =>
          `${path.slice(path.lastIndexOf('node_modules/') + 13)}@${meta.version}: node ${meta.engines!.node}`,
      );
    expect(needsNewer).toEqual([]);
  });
});
