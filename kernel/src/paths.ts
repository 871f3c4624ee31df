import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The kernel package's directory, found by walking up from this module, which sits at a
 * different depth in source (kernel/src) and in the build (kernel/dist/src), or in another
 * package's bundle (the Lua worker's, plugins/lua-runtime/dist/src): there the kernel is the
 * sibling `kernel` of a directory above.
 */
export const kernelDir: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  const isKernel = (candidate: string): boolean => {
    const manifest = join(candidate, 'package.json');
    return (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === '@runner/kernel'
    );
  };
  for (;;) {
    if (isKernel(dir)) return dir;
    if (isKernel(join(dir, 'kernel'))) return join(dir, 'kernel');
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
