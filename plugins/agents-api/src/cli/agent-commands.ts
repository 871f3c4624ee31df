import { setTimeout as sleep } from 'node:timers/promises';
import {
  connectMaster,
  isRunnerError,
  type Agent,
  type AgentMetrics,
  type CommandContext,
  type CommandInput,
} from '@runner/plugin-sdk';
import { agentDetail, agentTable, metricsBlock, metricsLine } from './format.js';

const path = (name: string, rest = '') => `/agents/${encodeURIComponent(name)}${rest}`;
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

export async function listCommand({ options }: CommandInput, ctx: CommandContext): Promise<number> {
  const master = await connectMaster(ctx, options.masterUrl);
  const query = new URLSearchParams();
  for (const key of ['status', 'name', 'label', 'group', 'limit', 'offset'] as const) {
    const value = options[key];
    if (value !== undefined) query.set(key, Array.isArray(value) ? value.join(',') : String(value));
  }
  const qs = query.toString();
  const result = await master.call<{ agents: Agent[]; total: number }>('GET', `/agents${qs ? `?${qs}` : ''}`);
  if (options.output === 'json') {
    ctx.stdout.write(json(result));
    return 0;
  }
  if (result.total === 0) {
    ctx.stdout.write(qs ? 'no agent matches\n' : 'no agents registered (install one with runner agent install)\n');
    return 0;
  }
  ctx.stdout.write(agentTable(result.agents));
  if (result.agents.length < result.total) {
    ctx.stdout.write(`(${result.agents.length} of ${result.total} shown; use --limit and --offset for more)\n`);
  }
  return 0;
}

export async function getCommand({ args, options }: CommandInput, ctx: CommandContext): Promise<number> {
  const master = await connectMaster(ctx, options.masterUrl);
  const agent = await master.call<Agent>('GET', path(args[0]));
  ctx.stdout.write(options.output === 'json' ? json(agent) : agentDetail(agent));
  return 0;
}

export async function modulesCommand({ args, options }: CommandInput, ctx: CommandContext): Promise<number> {
  const master = await connectMaster(ctx, options.masterUrl);
  const agent = await master.call<Agent>('GET', path(args[0]));
  const modules = [...(agent.modules ?? [])].sort();
  if (options.output === 'json') ctx.stdout.write(json(modules));
  else if (modules.length === 0) ctx.stdout.write(`agent ${agent.name} reports no Lua modules\n`);
  else ctx.stdout.write(`${modules.join('\n')}\n`);
  return 0;
}

export async function stopCommand({ args, options }: CommandInput, ctx: CommandContext): Promise<number> {
  const master = await connectMaster(ctx, options.masterUrl);
  const answer = await master.call<{ message: string }>('POST', path(args[0], '/stop'));
  ctx.stdout.write(`${answer.message}\n`);
  return 0;
}

export async function restartCommand({ args, options }: CommandInput, ctx: CommandContext): Promise<number> {
  const master = await connectMaster(ctx, options.masterUrl);
  const answer = await master.call<{ message: string }>('POST', path(args[0], '/restart'));
  ctx.stdout.write(`${answer.message}\n`);
  return 0;
}

export async function removeCommand({ args, options }: CommandInput, ctx: CommandContext): Promise<number> {
  const master = await connectMaster(ctx, options.masterUrl);
  await master.call('DELETE', path(args[0]));
  ctx.stdout.write(
    `agent ${args[0]} and its credential removed from the master (the join token can enrol the name again)\n`,
  );
  return 0;
}

export async function revokeCommand({ args, options }: CommandInput, ctx: CommandContext): Promise<number> {
  const master = await connectMaster(ctx, options.masterUrl);
  const agent = await master.call<Agent>('POST', path(args[0], '/revoke'));
  ctx.stdout.write(
    `agent ${agent.name}: credential revoked at ${agent.revoked_at ?? 'now'}; its session is closed and it cannot reconnect (\`runner agent remove ${agent.name}\` frees the name for the join token)\n`,
  );
  return 0;
}

/**
 * `runner agent metrics <name> [--watch]`. Watching redraws the view in place on a terminal and
 * prints one line per sample otherwise (one JSON object per line with --output json), until
 * Ctrl-C or `--count` samples. A failed sample is shown and the watch goes on, except for an
 * agent that no longer exists.
 */
export async function metricsCommand({ args, options }: CommandInput, ctx: CommandContext): Promise<number> {
  const [name] = args;
  const master = await connectMaster(ctx, options.masterUrl);
  const asJson = options.output === 'json';
  const sample = () => master.call<AgentMetrics>('GET', path(name, '/metrics'));
  if (options.watch !== true) {
    const metrics = await sample();
    ctx.stdout.write(asJson ? json(metrics) : metricsBlock(name, metrics));
    return 0;
  }

  const intervalMs = Math.round(Number(options.interval ?? 5) * 1000);
  const count = options.count === undefined ? Infinity : Number(options.count);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const redraw = ctx.isTTY && !asJson;
  let samples = 0;
  let failures = 0;
  try {
    for (let taken = 0; taken < count && !stop.signal.aborted; taken++) {
      if (taken > 0) {
        try {
          await sleep(intervalMs, undefined, { signal: stop.signal });
        } catch {
          break;
        }
      }
      let metrics: AgentMetrics;
      try {
        metrics = await sample();
      } catch (error) {
        if (isRunnerError(error) && error.status === 404) throw error;
        const message = error instanceof Error ? error.message : String(error);
        if (redraw) ctx.stdout.write(`\x1b[H\x1b[2J${new Date().toISOString()} ${message}\n(retrying; Ctrl-C stops)\n`);
        else ctx.stderr.write(`${new Date().toISOString()} ${message}\n`);
        failures += 1;
        continue;
      }
      samples += 1;
      if (redraw) {
        // Home and clear, then the whole view: flicker-free enough at one redraw per second or slower.
        ctx.stdout.write(
          `\x1b[H\x1b[2J${metricsBlock(name, metrics)}\nevery ${intervalMs / 1000} s from ${master.endpoint.base}; Ctrl-C stops\n`,
        );
      } else {
        ctx.stdout.write(asJson ? `${JSON.stringify(metrics)}\n` : metricsLine(metrics));
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  // A watch that never got one sample failed, whatever stopped it.
  return samples === 0 && failures > 0 ? 1 : 0;
}
