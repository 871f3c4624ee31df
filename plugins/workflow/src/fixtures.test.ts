import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fakeCheckScript, fakeTemplateVariables } from '../test-fixtures/checkers.js';
import { WorkflowValidationError } from '@runner/plugin-sdk';
import { selectGroup, topologicalOrder } from './graph.js';
import { applyOverrides } from './overrides.js';
import { parseValues, parseWorkflow } from './parse.js';
import type { ParseWorkflowOptions } from './types.js';

const fixture = (name: string) => new URL(`../test-fixtures/${name}`, import.meta.url);
const read = (name: string) => readFileSync(fixture(name), 'utf8');
const hooks: Omit<ParseWorkflowOptions, 'file'> = {
  checkScript: fakeCheckScript,
  templateVariables: fakeTemplateVariables,
};
const parse = (name: string) => parseWorkflow(read(name), { file: name, ...hooks });

describe('the contract’s own example', () => {
  it('parses with every hook and no warning', () => {
    const { workflow, warnings } = parse('contract-example.yaml');
    expect(warnings).toEqual([]);
    expect(workflow).toMatchObject({
      version: '1.0',
      description: 'Deploy the web tier',
      template: 'jinja',
      parallel: 1,
      vars: { app: 'web' },
      groups: { deploy: ['build', 'ship'] },
      values: { 'web-1': { port: 8081 }, 'web-2': { port: 8082 } },
    });
    expect(workflow.tasks.map((t) => t.name)).toEqual(['build', 'ship', 'per-host']);
    expect(workflow.tasks[1]).toMatchObject({
      dependsOn: ['build'],
      delegateTo: ['web-1', 'web-2'],
      when: "{{ vars.app == 'web' }}",
      retry: { attempts: 3, delayMs: 2000, backoff: 2 },
      timeoutMs: 30_000,
      source: { file: 'contract-example.yaml', line: 16, column: 5, scriptLines: [24, 25] },
    });
    expect(workflow.tasks[2]).toMatchObject({ loop: ['web-1', 'web-2'], delegateTo: ['{{ item }}'] });
    expect(workflow.tasks[0].exec.script).toBe(
      [
        'local r = exec.run("echo building {{ vars.app }}")',
        'if r.exit_code ~= 0 then error("build failed: " .. r.stderr) end',
        'return true, "built", { artifact = "web-1.0.tgz" }',
        '',
      ].join('\n'),
    );
  });

  it('selects the deploy group', () => {
    const { workflow } = parse('contract-example.yaml');
    expect(selectGroup(workflow, 'deploy').map((t) => t.name)).toEqual(['build', 'ship']);
  });
});

describe('every-key.yaml', () => {
  it('parses every key away from its default', () => {
    const { workflow, warnings } = parse('every-key.yaml');
    expect(warnings).toEqual([]);
    expect(workflow).toMatchObject({
      version: '1.2',
      description: 'Builds, tests and rolls out the API,\none host at a time.\n',
      parallel: 2,
      vars: { app: 'api', port: '8080', hosts: 'web-1, web-2', verbose: 'false' },
      groups: { release: ['rollout'], checks: ['lint', 'test'] },
    });
    const [lint, test, rollout, smoke, notify] = workflow.tasks;
    expect(lint).toMatchObject({ dryRun: 'run', dependsOn: [] });
    expect(test).toMatchObject({
      dependsOn: ['lint'],
      timeoutMs: 600_000,
      retry: { attempts: 2, delayMs: 1000, backoff: 1 },
      ignoreErrors: true,
      exec: { script: 'return exec.run("make test").success' },
    });
    expect(rollout).toMatchObject({
      loop: '{{ vars.hosts }}',
      delegateTo: ['{{ item }}'],
      retry: { attempts: 4, delayMs: 500, backoff: 2, maxDelayMs: 5000 },
    });
    expect(smoke).toMatchObject({
      delegation: { strategy: 'conditional', when: '{{ agent.cpu_usage < 80 }}' },
      loop: [
        { path: '/health', status: 200 },
        { path: '/ready', status: 200 },
      ],
    });
    expect(notify).toMatchObject({ delegation: { strategy: 'failover' }, delegateTo: ['web-1', 'web-2'] });
    expect(workflow.values['web-1']).toEqual({ port: 8081, tls: { enabled: true, cert: '/etc/ssl/web-1.pem' } });
    expect(topologicalOrder(workflow.tasks).map((t) => t.name)).toEqual(['lint', 'test', 'rollout', 'smoke', 'notify']);
    expect(selectGroup(workflow, 'release').map((t) => t.name)).toEqual(['lint', 'test', 'rollout']);
  });

  it('takes a --values file and --var over it', () => {
    const { workflow } = parse('every-key.yaml');
    const values = parseValues(read('values-override.yaml'), { file: 'values-override.yaml' });
    const result = applyOverrides(workflow, { vars: ['app=web', 'hosts=web-3'], values });
    expect(result.vars).toMatchObject({ app: 'web', hosts: 'web-3' });
    expect(result.values).toEqual({
      localhost: { region: 'eu' },
      'web-1': { port: 9091, tls: { enabled: false, cert: '/etc/ssl/web-1.pem' } },
      'web-2': { port: 8082 },
      'db-1': { port: 5432 },
    });
  });
});

describe('go-template.yaml', () => {
  it('parses, and {% is not a tag under the Go engine', () => {
    const { workflow } = parse('go-template.yaml');
    expect(workflow.template).toBe('go');
    expect(workflow.tasks[0].when).toBe('{{ if eq .vars.greeting "hello" }}true{{ end }}');
  });
});

describe.each(['many-problems', 'cycle'])('%s.yaml', (name) => {
  it('fails with exactly the problems in its .expected.txt', () => {
    let error: unknown;
    try {
      parse(`${name}.yaml`);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(WorkflowValidationError);
    expect((error as Error).message).toBe(read(`${name}.expected.txt`).trimEnd());
  });
});
