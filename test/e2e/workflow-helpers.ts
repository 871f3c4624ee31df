import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import {
  WorkflowEngineRef,
  type BusEvent,
  type Logger,
  type Profile,
  type RunProgress,
  type RunRecord,
  type RunRequest,
  type RunningKernel,
  type TaskResult,
  type WorkflowEngine,
} from '@runner/plugin-sdk';
import { bootKernel, discoverPlugins, kernelVersion, loadConfig } from '../../kernel/index.js';
import { repoRoot } from './helpers.js';

/** A logger that keeps warnings and errors (a test may look at them) and prints nothing. */
export function quietLogger(lines: string[] = []): Logger {
  const logger: Logger = {
    debug: () => {},
    info: () => {},
    warn: (message) => void lines.push(`warn ${message}`),
    error: (message) => void lines.push(`error ${message}`),
    child: () => logger,
  };
  return logger;
}

export interface EngineHarness {
  kernel: RunningKernel;
  engine: WorkflowEngine;
  /** The kernel's data directory (its `auth/local.token` authenticates REST calls to a master). */
  dataDir: string;
  /** Temp directory for workflow files and whatever scripts write. */
  dir: string;
  /** Every bus event since boot. */
  events: BusEvent[];
  /** Writes `<dir>/<name>.yaml` and returns its path. */
  write(name: string, text: string): string;
  /** Writes the workflow, runs it to its end; returns the record, its bus events and its progress. */
  run(name: string, text: string, request?: Partial<RunRequest>): Promise<RunOutcome>;
  stop(): Promise<void>;
}

export interface RunOutcome {
  record: RunRecord;
  file: string;
  events: BusEvent[];
  progress: RunProgress[];
  /** Task results by unit name. */
  task(name: string): TaskResult;
}

/**
 * Boots a real kernel in this process: every builtin plugin of the profile, a store in a fresh
 * data directory. `env` is the config's environment (e.g. RUNNER_ENGINE_TASK_LOG_BYTES).
 */
export async function bootEngine(
  options: { profile?: Profile; env?: Record<string, string> } = {},
): Promise<EngineHarness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'runner-wf-data-'));
  // The default workflow directory (engine.workflow_dirs): files the API's `file` field may read.
  const dir = join(dataDir, 'workflows');
  mkdirSync(dir);
  // RUNNER_BUILTIN_PLUGINS_DIR is honoured as the CLI honours it (a snapshot of the plugins).
  const plugins = await discoverPlugins({
    builtinDir: process.env.RUNNER_BUILTIN_PLUGINS_DIR ?? join(repoRoot, 'plugins'),
  });
  const kernel = await bootKernel({
    profile: options.profile ?? 'embedded',
    plugins,
    config: await loadConfig({ dataDir, env: { ...options.env } }, plugins),
    logger: quietLogger(),
    kernelVersion,
  });
  const engine = kernel.get(WorkflowEngineRef);
  const events: BusEvent[] = [];
  kernel.events.onAny((event) => void events.push(event));
  const write = (name: string, text: string) => {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(file, text);
    return file;
  };
  return {
    kernel,
    engine,
    dataDir,
    dir,
    events,
    write,
    async run(name, text, request = {}) {
      const file = write(name, text);
      const progress: RunProgress[] = [];
      const { runId, done } = await engine.start({ source: { file }, workflowName: name, ...request }, (p) =>
        progress.push(p),
      );
      const record = await done;
      expect(record.id).toBe(runId);
      return {
        record,
        file,
        progress,
        events: events.filter((e) => (e.data as { run_id?: string }).run_id === runId),
        task(unit) {
          const found = record.tasks.find((t) => t.name === unit);
          if (!found) throw new Error(`no result for ${unit}; have ${record.tasks.map((t) => t.name).join(', ')}`);
          return found;
        },
      };
    },
    stop: () => kernel.stop('test finished'),
  };
}

/** The YAML of a workflow from its task list (and top-level keys), indented as a file would be. */
export function workflow(body: string): string {
  return `version: "1.0"\n${body.replace(/^\n/, '')}`;
}

/** Milliseconds since the epoch of an ISO time. */
export const ms = (iso: string | undefined): number => Date.parse(iso as string);
