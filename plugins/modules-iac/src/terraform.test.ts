import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { luaCallContext } from '@runner/plugin-sdk/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { createTerraformModule, summarisePlan } from './terraform.js';

describe('plan summary', () => {
  // Recorded from `terraform show -json` (Terraform 1.11), cut to the fields read.
  const recorded = {
    format_version: '1.2',
    resource_changes: [
      { address: 'terraform_data.kept', type: 'terraform_data', name: 'kept', change: { actions: ['no-op'] } },
      { address: 'terraform_data.new', type: 'terraform_data', name: 'new', change: { actions: ['create'] } },
      {
        address: 'terraform_data.swap',
        type: 'terraform_data',
        name: 'swap',
        change: { actions: ['delete', 'create'] },
      },
      { address: 'aws_s3_bucket.logs', type: 'aws_s3_bucket', name: 'logs', change: { actions: ['update'] } },
      { address: 'aws_instance.old', type: 'aws_instance', name: 'old', change: { actions: ['delete'] } },
      { address: 'data.aws_ami.base', type: 'aws_ami', name: 'base', change: { actions: ['read'] } },
      {
        address: 'aws_vpc.main',
        type: 'aws_vpc',
        name: 'main',
        change: { actions: ['no-op'], importing: { id: 'vpc-0abc' } },
      },
    ],
    output_changes: { said: { actions: ['update'] }, same: { actions: ['no-op'] } },
  };

  it('counts as terraform plan prints: a replace adds one and destroys one; reads change nothing', () => {
    const s = summarisePlan(recorded);
    expect(s.summary).toEqual({ add: 2, change: 1, destroy: 2, import: 1 });
    expect(s.changed).toBe(true);
    expect(s.resources.map((r) => `${r.address}:${r.action}`)).toEqual([
      'terraform_data.new:create',
      'terraform_data.swap:replace',
      'aws_s3_bucket.logs:update',
      'aws_instance.old:delete',
      'aws_vpc.main:import',
    ]);
    expect(s.outputs).toEqual({ said: 'update', same: 'no-op' });
  });

  it('is unchanged when every resource and output is a no-op', () => {
    const s = summarisePlan({
      resource_changes: [{ address: 'a.b', type: 'a', name: 'b', change: { actions: ['no-op'] } }],
      output_changes: { x: { actions: ['no-op'] } },
    });
    expect(s).toMatchObject({ changed: false, summary: { add: 0, change: 0, destroy: 0, import: 0 }, resources: [] });
    expect(summarisePlan({ output_changes: { x: { actions: ['create'] } } }).changed).toBe(true);
  });
});

// The real terraform binary, where one is installed (it is not a Debian or npm package): the
// built-in terraform_data resource needs no provider download, so init, plan and apply run offline.
const terraform =
  spawnSync('terraform', ['version'], { env: { ...process.env, CHECKPOINT_DISABLE: '1' } }).status === 0;
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe.skipIf(!terraform)('terraform module with the real terraform', () => {
  it('inits, plans, applies once, reports nothing to do the second time, honours dry-run, reads outputs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-tf-test-'));
    dirs.push(dir);
    writeFileSync(
      join(dir, 'main.tf'),
      `terraform {
  backend "local" { path = "state/terraform.tfstate" }
}
variable "greeting" { type = string }
variable "tags" { type = map(string) }
resource "terraform_data" "a" {
  input            = "\${var.greeting} \${var.tags["env"]}"
  triggers_replace = [var.greeting]
}
output "said" { value = terraform_data.a.output }
output "secret" {
  value     = "s3cr3t"
  sensitive = true
}
`,
    );
    const tf = createTerraformModule('terraform');
    const { call } = luaCallContext();
    const dry = luaCallContext({ dryRun: true }).call;
    const vars = { greeting: 'hello', tags: { env: 'prod' } };

    expect(await tf.init(dry, dir)).toMatchObject({ changed: null, dry_run: true });
    expect(await tf.init(call, dir)).toEqual({ changed: true });
    expect(await tf.init(call, dir)).toEqual({ changed: false });
    expect(await tf.validate(call, dir)).toMatchObject({ valid: true });

    const planned = await tf.plan(call, dir, { vars });
    expect(planned).toMatchObject({
      changed: true,
      summary: { add: 1, change: 0, destroy: 0 },
      outputs: { said: 'create' },
    });
    expect(await tf.apply(dry, dir, { vars })).toMatchObject({ changed: true, dry_run: true });
    await expect(tf.output(call, dir, 'said')).rejects.toThrow(/output/);

    expect(await tf.apply(call, dir, { vars })).toMatchObject({ changed: true, summary: { add: 1 } });
    expect(await tf.apply(call, dir, { vars })).toMatchObject({
      changed: false,
      summary: { add: 0, change: 0, destroy: 0 },
    });
    expect(await tf.output(call, dir)).toEqual({ said: 'hello prod', secret: 's3cr3t' });
    expect(await tf.output(call, dir, 'said')).toBe('hello prod');

    // A changed trigger replaces terraform_data: one to add, one to destroy.
    const replaced = await tf.apply(call, dir, { vars: { ...vars, greeting: 'bye' } });
    expect(replaced).toMatchObject({
      changed: true,
      summary: { add: 1, destroy: 1 },
      resources: [{ action: 'replace' }],
    });
    expect(await tf.destroy(call, dir, { vars })).toMatchObject({ changed: true, summary: { destroy: 1 } });
    expect(await tf.destroy(call, dir, { vars })).toMatchObject({ changed: false });
  }, 60_000);

  it('fails with terraform own message on a broken configuration', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-tf-test-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'main.tf'), 'resource "terraform_data" "a" { input = var.missing }\n');
    const tf = createTerraformModule('terraform');
    const { call } = luaCallContext();
    await tf.init(call, dir);
    const validated = (await tf.validate(call, dir)) as { valid: boolean; diagnostics: { summary: string }[] };
    expect(validated.valid).toBe(false);
    expect(validated.diagnostics[0].summary).toMatch(/undeclared input variable/i);
    await expect(tf.plan(call, dir)).rejects.toThrow(/terraform: plan failed:.*undeclared input variable/is);
    await expect(tf.plan(call, join(dir, 'nope'))).rejects.toThrow(/does not exist/);
  }, 60_000);
});
