import type { HookDeclaration, ScheduleDeclaration, WorkflowProblem } from '@runner/plugin-sdk';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node, type YAMLMap } from 'yaml';

/** A declaration with where it sits in the manifest, for errors that name file:line:column. */
export interface Declared<T> {
  value: T;
  file: string;
  line: number;
  column: number;
  /** `hooks[0]`. */
  path: string;
}

export interface Manifest {
  hooks: Declared<HookDeclaration>[];
  schedules: Declared<ScheduleDeclaration>[];
}

const HOOK_FIELDS = [
  'name',
  'event',
  'event_type',
  'script',
  'script_file',
  'enabled',
  'priority',
  'timeout',
  'retries',
  'stack',
];
const SCHEDULE_FIELDS = [
  'name',
  'description',
  'flow',
  'workflow',
  'schedule',
  'timezone',
  'missed',
  'overlap',
  'vars',
  'stack',
  'enabled',
];

/**
 * Reads the manifest (`runner.yaml` at the synced path's root): `hooks:` and `schedules:`, lists
 * of the fields the hooks and scheduler APIs take (a hook's `event` may stand for `event_type`,
 * its `script_file` names a file beside the manifest). Every problem is returned with its line
 * and column; what each service checks of the values is checked later, at the item's position.
 */
export async function parseManifest(
  text: string,
  file: string,
  readBeside: (relative: string) => Promise<string | undefined>,
): Promise<{ manifest: Manifest; problems: WorkflowProblem[] }> {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const problems: WorkflowProblem[] = [];
  const at = (node: Node | null | undefined, path: string, message: string) => {
    const { line, col } = lines.linePos(node?.range?.[0] ?? 0);
    problems.push({ file, line, column: col, path, message: path ? `${path}: ${message}` : message });
  };
  const manifest: Manifest = { hooks: [], schedules: [] };
  for (const error of doc.errors) {
    const { line, col } = lines.linePos(error.pos[0]);
    problems.push({ file, line, column: col, path: '', message: error.message.split('\n')[0] ?? error.message });
  }
  if (problems.length > 0 || doc.contents === null) return { manifest, problems };
  if (!isMap(doc.contents)) {
    at(doc.contents, '', 'the manifest is a mapping with hooks: and schedules:');
    return { manifest, problems };
  }
  for (const pair of doc.contents.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    if (key !== 'hooks' && key !== 'schedules') {
      at(pair.key as Node, key, 'unknown section: use hooks or schedules');
      continue;
    }
    if (pair.value === null || (isScalar(pair.value) && pair.value.value === null)) continue;
    if (!isSeq(pair.value)) {
      at(pair.value as Node, key, 'a list');
      continue;
    }
    for (const [index, item] of pair.value.items.entries()) {
      const path = `${key}[${index}]`;
      if (!isMap(item)) {
        at(item as Node, path, 'a mapping of fields');
        continue;
      }
      const fields = key === 'hooks' ? HOOK_FIELDS : SCHEDULE_FIELDS;
      for (const field of item.items) {
        const name = isScalar(field.key) ? String(field.key.value) : '';
        if (!fields.includes(name)) at(field.key as Node, `${path}.${name}`, `unknown field: use ${fields.join(', ')}`);
      }
      const value = item.toJSON() as Record<string, unknown>;
      const { line, col } = lines.linePos(item.range?.[0] ?? 0);
      const where = { file, line, column: col, path };
      if (typeof value.name !== 'string' || value.name === '') {
        at(item, `${path}.name`, 'give the name');
        continue;
      }
      if (key === 'schedules') {
        manifest.schedules.push({ ...where, value: value as unknown as ScheduleDeclaration });
        continue;
      }
      const hook = await hookOf(value, item, path, readBeside, at);
      if (hook) manifest.hooks.push({ ...where, value: hook });
    }
  }
  return { manifest, problems };
}

async function hookOf(
  value: Record<string, unknown>,
  item: YAMLMap,
  path: string,
  readBeside: (relative: string) => Promise<string | undefined>,
  at: (node: Node | null | undefined, path: string, message: string) => void,
): Promise<HookDeclaration | undefined> {
  const { event, script_file: scriptFile, ...rest } = value;
  const hook = { ...rest, event_type: rest.event_type ?? event } as HookDeclaration;
  if (typeof scriptFile === 'string') {
    const script = await readBeside(scriptFile);
    if (script === undefined) {
      at(item.get('script_file', true) as Node, `${path}.script_file`, `no file ${scriptFile} beside the manifest`);
      return undefined;
    }
    hook.script = script;
  }
  return hook;
}
