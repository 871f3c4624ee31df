import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { InvalidInputError } from '@runner/plugin-sdk';

/** Where the built UI is, or why it cannot be served. */
export type UiDir = { dir: string } | { missing: string };

/**
 * The directory of the built UI: `ui.dir` when set (a wrong one is an error naming the key), else
 * `build/` of the `@runner/ui` workspace package, found through module resolution so the answer is
 * the same from source and from dist. An unbuilt default is reported, not fatal: the API still works.
 */
export function findUiDir(configured: string | undefined, from: string): UiDir {
  if (configured) {
    const dir = resolve(configured);
    if (!existsSync(join(dir, 'index.html'))) {
      throw new InvalidInputError(`ui.dir: ${dir} holds no index.html (point it at the output of the UI build)`, {
        field: 'ui.dir',
      });
    }
    return { dir };
  }
  let dir: string;
  try {
    dir = join(dirname(createRequire(from).resolve('@runner/ui/package.json')), 'build');
  } catch {
    return { missing: 'the @runner/ui package is not installed beside this runner' };
  }
  if (!existsSync(join(dir, 'index.html'))) {
    return { missing: `${dir}/index.html is missing (run \`npm run build\` in the repository)` };
  }
  return { dir };
}
