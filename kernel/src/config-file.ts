import { readFileSync } from 'node:fs';
import { InvalidInputError } from '@runner/plugin-sdk';
import { LineCounter, parseDocument } from 'yaml';

// A module of its own, imported by config.ts only when a config file exists. yaml is bundled into
// the build's chunks, and a dynamic import() of a bundled CommonJS library yields its default
// export alone, so the library is imported statically here and this module dynamically.

/** The config file's mapping; a YAML error names file:line:col. */
export async function readYamlConfig(file: string): Promise<Record<string, unknown>> {
  const lineCounter = new LineCounter();
  const doc = parseDocument(readFileSync(file, 'utf8'), { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    const first = doc.errors[0];
    const pos = lineCounter.linePos(first.pos[0]);
    throw new InvalidInputError(`${file}:${pos.line}:${pos.col}: ${first.message.split('\n')[0]}`, { field: 'config' });
  }
  const value = doc.toJS() as unknown;
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidInputError(
      `${file}: the config file must be a mapping of keys, not ${Array.isArray(value) ? 'a list' : typeof value}`,
      {
        field: 'config',
      },
    );
  }
  return value as Record<string, unknown>;
}
