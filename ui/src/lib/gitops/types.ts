import type { paths } from '$lib/api/schema';

/** Shapes of the GitOps API, from the generated OpenAPI types. */
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
export type GitopsStatus = Json<paths['/api/v1/gitops/status']['get']['responses'][200]>;
export type GitopsDiff = Json<paths['/api/v1/gitops/diff']['get']['responses'][200]>;
export type GitopsSync = Json<paths['/api/v1/gitops/sync']['post']['responses'][200]>;
export type Drift = GitopsStatus['drift'][number];

export const shortCommit = (id: string | null | undefined) => (id ? id.slice(0, 12) : '–');

/** A unified diff's lines, each with how to mark it (added, removed, a hunk or file header). */
export function diffLines(unified: string): { text: string; kind: 'add' | 'del' | 'meta' | 'same' }[] {
  return unified
    .replace(/\n$/, '')
    .split('\n')
    .filter((line) => !/^={10,}$/.test(line))
    .map((text) => ({
      text,
      kind:
        text.startsWith('+++') || text.startsWith('---') || text.startsWith('@@')
          ? 'meta'
          : text.startsWith('+')
            ? 'add'
            : text.startsWith('-')
              ? 'del'
              : 'same',
    }));
}
