import { basename, extname } from 'node:path';
import { readWorkflowFile } from './workflow-files.js';
import { didYouMean, InvalidInputError, type ResolvedSource, type WorkflowSource } from '@runner/plugin-sdk';

type KindSource = { kind: string; ref: string; version?: number };
export type SourceResolver = (source: KindSource) => Promise<ResolvedSource>;

/** `file` and `content` are the shapes `{ file }` and `{ content }`; a plugin cannot take them over. */
const BUILT_IN = ['file', 'content'];

/**
 * Where workflow text comes from. Files and inline text are built in; other kinds (a saved flow by
 * name and version) are registered by the plugins that keep them.
 */
export class WorkflowSources {
  private readonly resolvers = new Map<string, SourceResolver>();

  register(kind: string, resolve: SourceResolver): void {
    if (typeof kind !== 'string' || !/^[a-z][a-z0-9_-]*$/.test(kind))
      throw new InvalidInputError(
        `registerSource: kind must be a lower-case word such as "flow", got ${JSON.stringify(kind)}`,
        {
          field: 'kind',
        },
      );
    if (BUILT_IN.includes(kind) || this.resolvers.has(kind))
      throw new InvalidInputError(`registerSource: a source of kind "${kind}" is already registered`, {
        field: 'kind',
      });
    if (typeof resolve !== 'function')
      throw new InvalidInputError(`registerSource("${kind}"): the resolver must be a function`, { field: 'resolve' });
    this.resolvers.set(kind, resolve);
  }

  /** The workflow's text, the name errors are reported at, and the run's default name. */
  async resolve(source: WorkflowSource): Promise<{ text: string; file: string; name: string }> {
    if ('file' in source) {
      return {
        text: await readWorkflowFile(source.file, source.within),
        file: source.file,
        name: basename(source.file, extname(source.file)),
      };
    }
    if ('content' in source) {
      return {
        text: source.content,
        file: source.label ?? source.name ?? '<content>',
        name: source.name ?? 'workflow',
      };
    }
    const resolver = this.resolvers.get(source.kind);
    if (!resolver) {
      const known = [...BUILT_IN, ...this.resolvers.keys()];
      throw new InvalidInputError(
        `source: no workflow source of kind "${source.kind}"${didYouMean(source.kind, known)} (known: ${known.join(', ')})`,
        { field: 'source.kind' },
      );
    }
    const resolved = await resolver(source);
    const label = `${source.kind}:${source.ref}${source.version === undefined ? '' : `@${source.version}`}`;
    return { text: resolved.content, file: resolved.path ?? label, name: resolved.name };
  }
}
