import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  InvalidInputError,
  luaOptionalBoolean,
  luaOptionalString,
  luaString,
  luaStringList,
  luaStringMap,
  readLuaOptions,
  runTool,
  toLuaValue,
  toolFailure,
  type LuaCallContext,
  type LuaModuleImplementation,
  type LuaValue,
  type ToolResult,
} from '@runner/plugin-sdk';
import { terraformModule } from './terraform-spec.js';

/** Terraform and OpenTofu share their command line and their plan JSON. */
export type TerraformTool = 'terraform' | 'tofu';

/** What every command runs with: no prompts, no colour, no version check over the network. */
const AUTOMATION_ENV = { TF_IN_AUTOMATION: '1', TF_INPUT: '0', CHECKPOINT_DISABLE: '1' };

const PLAN_OPTIONS = ['vars', 'var_files', 'targets', 'destroy', 'refresh', 'env'] as const;

/** One resource's planned change. */
export interface ResourceChange {
  address: string;
  type: string;
  name: string;
  /** `create`, `update`, `delete`, `replace`, `read`, `no-op`. */
  action: string;
  importing: boolean;
}

/** What a plan would do: the counts `terraform plan` prints, and each change. */
export interface PlanSummary {
  changed: boolean;
  summary: { add: number; change: number; destroy: number; import: number };
  resources: ResourceChange[];
  /** Output name to its action (`create`, `update`, `delete`, `no-op`). */
  outputs: Record<string, string>;
}

interface PlanJson {
  resource_changes?: {
    address: string;
    type: string;
    name: string;
    change: { actions: string[]; importing?: unknown };
  }[];
  output_changes?: Record<string, { actions: string[] }>;
}

/** A change's actions as one word: `["delete","create"]` either way round is a replace. */
function actionOf(actions: readonly string[]): string {
  if (actions.length === 2 && actions.includes('delete') && actions.includes('create')) return 'replace';
  return actions[0] ?? 'no-op';
}

/**
 * Reads `terraform show -json <planfile>`: counts as `terraform plan` prints them (a replace adds
 * one and destroys one), and changed when any resource or output would change. Data-source reads
 * change nothing; an import with no other change counts as a change (the state gains it).
 */
export function summarisePlan(plan: PlanJson): PlanSummary {
  const summary = { add: 0, change: 0, destroy: 0, import: 0 };
  const resources: ResourceChange[] = [];
  for (const rc of plan.resource_changes ?? []) {
    const action = actionOf(rc.change.actions);
    const importing = rc.change.importing !== undefined && rc.change.importing !== null;
    if (action === 'create' || action === 'replace') summary.add++;
    if (action === 'update') summary.change++;
    if (action === 'delete' || action === 'replace') summary.destroy++;
    if (importing) summary.import++;
    if (action !== 'no-op' && action !== 'read')
      resources.push({ address: rc.address, type: rc.type, name: rc.name, action, importing });
    else if (importing)
      resources.push({ address: rc.address, type: rc.type, name: rc.name, action: 'import', importing });
  }
  const outputs: Record<string, string> = {};
  for (const [name, oc] of Object.entries(plan.output_changes ?? {})) outputs[name] = actionOf(oc.actions);
  const changed = resources.length > 0 || Object.values(outputs).some((a) => a !== 'no-op');
  return { changed, summary, resources, outputs };
}

interface PlanRequest {
  args: string[];
  env: Record<string, string>;
}

/** The arguments plan takes from the options; variables come in a file, never on the command line. */
function planArguments(fn: string, o: Record<string, LuaValue>, varFile: string | undefined): PlanRequest {
  const args = ['-input=false', '-no-color'];
  if (varFile) args.push(`-var-file=${varFile}`);
  for (const file of luaStringList(fn, 'option var_files', o.var_files)) args.push(`-var-file=${file}`);
  for (const target of luaStringList(fn, 'option targets', o.targets)) args.push(`-target=${target}`);
  if (luaOptionalBoolean(fn, 'option destroy', o.destroy)) args.push('-destroy');
  if (luaOptionalBoolean(fn, 'option refresh', o.refresh) === false) args.push('-refresh=false');
  return { args, env: luaStringMap(fn, 'option env', o.env) };
}

/** Variables as JSON: any Lua value a variable may take (lists, maps) and no secret in the process list. */
function writeVarFile(dir: string, vars: LuaValue): string | undefined {
  if (vars === null || vars === undefined) return undefined;
  const file = join(dir, 'vars.tfvars.json');
  writeFileSync(file, JSON.stringify(vars), { mode: 0o600 });
  return file;
}

/** What init leaves behind, hashed: a second init that fetched nothing new leaves it as it was. */
function initState(dir: string): string {
  const hash = createHash('sha256');
  for (const file of ['.terraform.lock.hcl', '.terraform/terraform.tfstate', '.terraform/modules/modules.json']) {
    const path = join(dir, file);
    hash.update(`${file}:${existsSync(path) ? readFileSync(path, 'utf8') : '-'}\n`);
  }
  return hash.digest('hex');
}

export function createTerraformModule(
  tool: TerraformTool,
  options: { bin?: string } = {},
): LuaModuleImplementation<keyof typeof terraformModule.functions> {
  const bin = options.bin ?? tool;
  const run = (
    call: LuaCallContext,
    dir: string,
    args: string[],
    env: Record<string, string> = {},
  ): Promise<ToolResult> => runTool(call, { file: bin, args, cwd: dir, env: { ...AUTOMATION_ENV, ...env } });
  const must = async (
    call: LuaCallContext,
    dir: string,
    what: string,
    args: string[],
    env?: Record<string, string>,
  ) => {
    const result = await run(call, dir, args, env);
    if (result.code !== 0) throw toolFailure(tool, what, result);
    return result;
  };
  const fn = (name: string) => `${tool}.${name}`;

  /** Plans into a temp file and reads it back as JSON; the caller removes `scratch`. */
  async function plan(call: LuaCallContext, dir: string, o: Record<string, LuaValue>, scratch: string, name: string) {
    const request = planArguments(fn(name), o, writeVarFile(scratch, o.vars));
    const planFile = join(scratch, 'plan.bin');
    await must(call, dir, 'plan', ['plan', ...request.args, `-out=${planFile}`], request.env);
    const shown = await must(call, dir, 'show', ['show', '-json', '-no-color', planFile], request.env);
    return { summary: summarisePlan(JSON.parse(shown.stdout) as PlanJson), planFile, env: request.env };
  }

  const withScratch = async <T>(body: (scratch: string) => Promise<T>): Promise<T> => {
    const scratch = mkdtempSync(join(tmpdir(), `runner-${tool}-`));
    try {
      return await body(scratch);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  };

  const planResult = (summary: PlanSummary): Record<string, LuaValue> =>
    toLuaValue(summary) as Record<string, LuaValue>;

  async function applyOrDestroy(
    call: LuaCallContext,
    name: string,
    dirArg: LuaValue,
    opts: LuaValue,
    destroy: boolean,
  ) {
    const dir = checkDirectory(fn(name), dirArg);
    const o = readLuaOptions(fn(name), 2, opts, PLAN_OPTIONS);
    return withScratch(async (scratch) => {
      const planned = await plan(call, dir, destroy ? { ...o, destroy: true } : o, scratch, name);
      if (!planned.summary.changed) return { ...planResult(planned.summary), changed: false };
      if (call.dryRun)
        return { ...planResult(planned.summary), dry_run: true, note: `dry-run: would ${name} as planned` };
      // The saved plan, so what is applied is exactly what was summarised.
      await must(
        call,
        dir,
        name,
        ['apply', '-input=false', '-no-color', '-auto-approve', planned.planFile],
        planned.env,
      );
      return planResult(planned.summary);
    });
  }

  return {
    init: async (call, dirArg, opts) => {
      const dir = checkDirectory(fn('init'), dirArg);
      const o = readLuaOptions(fn('init'), 2, opts, ['backend_config', 'upgrade', 'reconfigure', 'backend', 'env']);
      const args = ['init', '-input=false', '-no-color'];
      for (const [key, value] of Object.entries(luaStringMap(fn('init'), 'option backend_config', o.backend_config))) {
        args.push(`-backend-config=${key}=${value}`);
      }
      if (luaOptionalBoolean(fn('init'), 'option upgrade', o.upgrade)) args.push('-upgrade');
      if (luaOptionalBoolean(fn('init'), 'option reconfigure', o.reconfigure)) args.push('-reconfigure');
      if (luaOptionalBoolean(fn('init'), 'option backend', o.backend) === false) args.push('-backend=false');
      const before = initState(dir);
      // Whether init would fetch or write anything is known only by running it: changed is nil.
      if (call.dryRun) return { changed: null, dry_run: true, note: `dry-run: would run ${tool} init in ${dir}` };
      await must(call, dir, 'init', args, luaStringMap(fn('init'), 'option env', o.env));
      return { changed: initState(dir) !== before };
    },
    validate: async (call, dirArg) => {
      const dir = checkDirectory(fn('validate'), dirArg);
      const result = await run(call, dir, ['validate', '-json', '-no-color']);
      if (result.stdout.trim() === '') throw toolFailure(tool, 'validate', result);
      const parsed = JSON.parse(result.stdout) as { valid: boolean; diagnostics?: unknown[] };
      return { valid: parsed.valid, diagnostics: toLuaValue(parsed.diagnostics ?? []) };
    },
    plan: async (call, dirArg, opts) => {
      const dir = checkDirectory(fn('plan'), dirArg);
      const o = readLuaOptions(fn('plan'), 2, opts, PLAN_OPTIONS);
      return withScratch(async (scratch) => planResult((await plan(call, dir, o, scratch, 'plan')).summary));
    },
    apply: (call, dir, opts) => applyOrDestroy(call, 'apply', dir, opts, false),
    destroy: (call, dir, opts) => applyOrDestroy(call, 'destroy', dir, opts, true),
    output: async (call, dirArg, nameArg) => {
      const dir = checkDirectory(fn('output'), dirArg);
      const name = luaOptionalString(fn('output'), 'argument 2 (name)', nameArg);
      const result = await must(call, dir, 'output', ['output', '-json', '-no-color', ...(name ? [name] : [])]);
      if (name) return toLuaValue(JSON.parse(result.stdout));
      const outputs = JSON.parse(result.stdout) as Record<string, { value: unknown }>;
      return toLuaValue(Object.fromEntries(Object.entries(outputs).map(([key, output]) => [key, output.value])));
    },
  };
}

/** The directory argument: a configuration directory that exists. */
function checkDirectory(fnName: string, dir: LuaValue): string {
  const path = luaString(fnName, 'argument 1 (directory)', dir);
  if (!existsSync(path)) throw new InvalidInputError(`${fnName}: directory ${path} does not exist`);
  return path;
}
