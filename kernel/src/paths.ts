import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The kernel package's directory, found by walking up from this module, which sits at a
 * different depth in source (kernel/src) and in the build (kernel/dist/src).
 */
export const kernelDir: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === '@runner/kernel'
    )
      return dir;
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error(`cannot find the @runner/kernel package above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
})();

export const kernelVersion: string = (
  JSON.parse(readFileSync(join(kernelDir, 'package.json'), 'utf8')) as { version: string }
).version;

/** The built-in plugins directory beside the kernel. */
export const builtinPluginsDir: string = join(kernelDir, '..', 'plugins');
