import type { paths } from '$lib/api/schema';

export type FlowList = paths['/api/v1/flows']['get']['responses'][200]['content']['application/json'];
export type FlowSummary = FlowList['flows'][number];
export type Flow = paths['/api/v1/flows/{name}']['get']['responses'][200]['content']['application/json'];
export type FlowVersions =
  paths['/api/v1/flows/{name}/versions']['get']['responses'][200]['content']['application/json'];
export type FlowDiff = paths['/api/v1/flows/{name}/diff']['get']['responses'][200]['content']['application/json'];
export type ExportDocument = paths['/api/v1/flows/export']['post']['responses'][200]['content']['application/json'];

/** `0.93` as `93%`; none before a run ended. */
export const percent = (rate: number | null) => (rate === null ? '–' : `${Math.round(rate * 100)}%`);

/** Saves an export document as a file the browser downloads (what `runner flow import` reads back). */
export function download(document: ExportDocument, name: string): void {
  const blob = new Blob([`${JSON.stringify(document, null, 2)}\n`], { type: 'application/json' });
  const link = Object.assign(window.document.createElement('a'), { href: URL.createObjectURL(blob), download: name });
  link.click();
  URL.revokeObjectURL(link.href);
}
