import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NotFoundError, WorkflowValidationError } from '@runner/plugin-sdk';
import { createTestKernel } from '@runner/plugin-sdk/testing';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import * as entry from '../index.js';
import { plugin } from './plugin.js';
import { WorkflowParserRef } from './service.js';

const workflowText = [
  'version: "1"',
  'vars: { app: web }',
  'tasks:',
  '  - { name: a, exec: { script: return true } }',
  '',
].join('\n');

describe('the workflow plugin', () => {
  it('provides the WorkflowParser service', async () => {
    const kernel = await createTestKernel({ plugins: [plugin] });
    const parser = kernel.get(WorkflowParserRef);
    const { workflow } = parser.parse(workflowText, { file: 'inline' });
    expect(workflow.tasks[0].name).toBe('a');
    expect(parser.parseDuration('1.5h')).toBe(5_400_000);
    expect(parser.parseVarArguments(['a=b'])).toEqual({ a: 'b' });
    expect(parser.applyOverrides(workflow, { vars: ['app=api'] }).vars.app).toBe('api');
    expect(parser.validate('version: "1"\n', { file: 'x' }).problems.map((p) => p.message)).toEqual([
      'missing required key "tasks"',
    ]);
    expect(parser.loopItemsFromText('a, b')).toEqual(['a', 'b']);
    expect(parser.conditionHolds('False')).toBe(false);
    await kernel.stop();
  });

  it('reads a workflow file from disk, naming it in problems', async () => {
    const parser = await entry.loadWorkflowParser();
    const dir = mkdtempSync(join(tmpdir(), 'runner-workflow-'));
    const good = join(dir, 'deploy.yaml');
    writeFileSync(good, workflowText);
    expect((await parser.parseFile(good)).workflow.file).toBe(good);
    expect((await parser.parseFile(good, { file: 'flow deploy' })).workflow.file).toBe('flow deploy');

    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, workflowText.replace('return true', '""'));
    await expect(parser.parseFile(bad)).rejects.toThrow(
      new WorkflowValidationError([
        {
          file: bad,
          line: 4,
          column: 32,
          path: 'tasks[0].exec.script',
          message: 'tasks[0].exec.script: the script is empty',
        },
      ]),
    );
    await expect(parser.parseFile(join(dir, 'missing.yaml'))).rejects.toThrow(
      new NotFoundError(`workflow file not found: ${join(dir, 'missing.yaml')}`),
    );
  });

  it('exports the plugin, the service ref and the yaml-free helpers from index.ts', () => {
    expect(entry.plugin).toBe(plugin);
    expect(entry.plugin.id).toBe('workflow');
    expect(entry.plugin.provides).toEqual([WorkflowParserRef]);
    expect(entry.WorkflowParserRef.id).toBe('workflow.parser');
    for (const name of ['parseDuration', 'selectGroup', 'topologicalOrder', 'applyOverrides', 'parseVarArguments']) {
      expect(typeof (entry as Record<string, unknown>)[name]).toBe('function');
    }
  });

  it('does not load yaml when index.ts is imported (runner --help imports every plugin)', async () => {
    const index = fileURLToPath(new URL('../index.ts', import.meta.url));
    const result = await build({
      entryPoints: [index],
      bundle: true,
      write: false,
      metafile: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      logLevel: 'silent',
    });
    const reached = (kinds: readonly string[]) => {
      const { inputs } = result.metafile as Metafile;
      const start = Object.keys(inputs).find((k) => k.endsWith('workflow/index.ts'))!;
      const seen = new Set<string>([start]);
      const pending = [start];
      while (pending.length > 0) {
        for (const imp of inputs[pending.pop()!].imports) {
          if (!kinds.includes(imp.kind) || seen.has(imp.path)) continue;
          seen.add(imp.path);
          if (inputs[imp.path]) pending.push(imp.path);
        }
      }
      return seen;
    };
    expect(reached(['import-statement'])).not.toContain('yaml');
    // The walk does find yaml once dynamic imports count, so the assertion above can fail.
    expect(reached(['import-statement', 'dynamic-import'])).toContain('yaml');
  });
});
