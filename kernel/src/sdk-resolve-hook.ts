/**
 * A module resolve hook (node:module `register`) for plugins loaded from outside the repository.
 * Such a plugin imports `@runner/plugin-sdk` but has no copy of it beside it: the SDK is not
 * published, and a second copy would not share the host's service refs and error classes anyway.
 * Every import of the SDK, whoever makes it, resolves to the copy the kernel itself uses.
 */
const SDK = '@runner/plugin-sdk';

interface ResolveContext {
  parentURL?: string;
  conditions?: readonly string[];
  importAttributes?: Record<string, string>;
}
type NextResolve = (specifier: string, context: ResolveContext) => Promise<unknown>;

/** The kernel's own module URL, from which the SDK is resolved (set by `register`'s data). */
let kernelUrl = '';

export function initialize(data: { kernelUrl: string }): void {
  kernelUrl = data.kernelUrl;
}

export async function resolve(specifier: string, context: ResolveContext, next: NextResolve): Promise<unknown> {
  if (kernelUrl && (specifier === SDK || specifier.startsWith(`${SDK}/`))) {
    return next(specifier, { ...context, parentURL: kernelUrl });
  }
  return next(specifier, context);
}
