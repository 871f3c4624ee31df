import { isRunnerError, type FlowsService, type Logger, type LuaValue, type ScriptDoor } from '@runner/plugin-sdk';
import { capText, OUTPUT_BYTES, type HookRow } from './hook-store.js';

/** What one execution of a hook's script came to. */
export interface ExecutionResult {
  success: boolean;
  durationMs: number;
  output: string;
  error?: string;
  /** The flows it started (or, in a dry run, would have started). */
  flows: { name: string; vars: Record<string, string>; run_id?: string; outcome: string }[];
}

export interface RunInput {
  eventType: string;
  payload: Record<string, unknown>;
  eventId: string;
  /** The event's loop-guard depth: a flow this hook starts emits events one deeper. */
  depth: number;
  attempt: number;
  dryRun: boolean;
}

/**
 * `flows.run(name, vars)` for hook scripts: a request gathered while the script runs and carried
 * out once it succeeded (so a hook that fails starts nothing, and the script needs no channel back
 * to the master wherever the door runs it). Prepended on the script's first line, so that errors
 * keep their line numbers; added only to scripts that mention `flows`, so the others stay eligible
 * for the runtime's side-effect-free fast path.
 */
const FLOWS_PRELUDE =
  'local __flow_requests = {} ' +
  'flows = { run = function(name, vars) ' +
  "if type(name) ~= 'string' then error('flows.run: the first argument must be the flow name', 2) end " +
  "if vars ~= nil and type(vars) ~= 'table' then error('flows.run: vars must be a table', 2) end " +
  '__flow_requests[#__flow_requests + 1] = { name = name, vars = vars or {} } return true end } ' +
  'return __flow_requests, (function(...) ';

function withFlows(script: string): string {
  return `${FLOWS_PRELUDE}${script}\nend)(...)`;
}

/** A logger keeping what the script prints (its output), capped, as well as passing it on. */
function collectingLogger(lines: string[], bytes: { n: number }): Logger {
  // What a script prints arrives as info lines (`{stream: 'stdout'}`), module logs at their level.
  const keep = (level: string) => (message: string) => {
    if (bytes.n > OUTPUT_BYTES) return;
    const line = level === 'info' ? message : `[${level}] ${message}`;
    bytes.n += Buffer.byteLength(line) + 1;
    lines.push(line);
  };
  const logger: Logger = {
    debug: () => {},
    info: keep('info'),
    warn: keep('warn'),
    error: keep('error'),
    child: () => logger,
  };
  return logger;
}

/** Runs hook scripts through the engine's door and starts the flows they ask for. */
export class HookRunner {
  constructor(
    private readonly door: ScriptDoor,
    private readonly flows: () => FlowsService | undefined,
    /** Tells the event queue that a run started by a hook is one level deeper (the loop guard). */
    private readonly noteRun: (runId: string, depth: number) => void,
  ) {}

  async run(hook: HookRow, input: RunInput): Promise<ExecutionResult> {
    const started = performance.now();
    const lines: string[] = [];
    const usesFlows = /\bflows\b/.test(hook.script);
    const result: ExecutionResult = { success: false, durationMs: 0, output: '', flows: [] };
    try {
      const { values } = await this.door.run(usesFlows ? withFlows(hook.script) : hook.script, {
        chunkName: `=hook ${hook.name}`,
        globals: {
          hook: {
            id: hook.id,
            name: hook.name,
            event: input.eventType,
            event_id: input.eventId,
            payload: input.payload as LuaValue,
          },
        },
        dryRun: input.dryRun,
        timeoutMs: hook.timeout_ms,
        logger: collectingLogger(lines, { n: 0 }),
        run: {
          workflow: `hook:${hook.name}`,
          runId: input.eventId,
          task: hook.name,
          attempt: input.attempt,
          agent: 'localhost',
        },
      });
      const [requests, ...returned] = usesFlows ? values : [undefined, ...values];
      if (returned[0] === false) {
        result.error =
          returned[1] === undefined || returned[1] === null ? 'the script returned false' : String(returned[1]);
      } else {
        await this.startFlows(hook, input, flowRequests(requests), result);
        result.success = result.error === undefined;
      }
    } catch (error) {
      result.error = isRunnerError(error) || error instanceof Error ? error.message : String(error);
    }
    result.durationMs = performance.now() - started;
    result.output = capText(lines.join('\n')) ?? '';
    return result;
  }

  /** Starts the flows the script asked for, in order; the first that cannot start fails the hook. */
  private async startFlows(
    hook: HookRow,
    input: RunInput,
    requests: { name: string; vars: Record<string, string> }[],
    result: ExecutionResult,
  ): Promise<void> {
    if (requests.length === 0) return;
    const flows = this.flows();
    for (const request of requests) {
      if (input.dryRun) {
        result.flows.push({ ...request, outcome: 'would start (dry run)' });
        continue;
      }
      if (!flows) {
        result.error = `flows.run("${request.name}"): no saved flows on this master (the flows plugin is not loaded)`;
        return;
      }
      try {
        const start = await flows.start(request.name, {
          trigger: 'hook',
          user: `hook:${hook.name}`,
          vars: request.vars,
          varsFrom: 'fields',
        });
        if (start.outcome === 'started') this.noteRun(start.runId, input.depth + 1);
        result.flows.push({
          ...request,
          outcome: start.outcome === 'skipped' ? `skipped: ${start.reason}` : start.outcome,
          ...(start.outcome === 'started' ? { run_id: start.runId } : {}),
        });
      } catch (error) {
        result.error = `flows.run("${request.name}"): ${(error as Error).message}`;
        return;
      }
    }
  }
}

/** The requests the prelude gathered (a Lua array comes back as an array, or `{}` when empty). */
function flowRequests(value: LuaValue | undefined): { name: string; vars: Record<string, string> }[] {
  const list = Array.isArray(value) ? value : value && typeof value === 'object' ? Object.values(value) : [];
  return list.map((item) => {
    const { name, vars } = item as { name: string; vars?: Record<string, LuaValue> };
    const strings: Record<string, string> = {};
    if (vars && typeof vars === 'object' && !Array.isArray(vars))
      for (const [key, v] of Object.entries(vars)) strings[key] = typeof v === 'string' ? v : JSON.stringify(v);
    return { name, vars: strings };
  });
}
