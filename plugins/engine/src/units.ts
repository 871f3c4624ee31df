import {
  didYouMean,
  InvalidInputError,
  isMasterHost,
  MASTER_HOST,
  type AgentDelegator,
  type BoundedRenderOptions,
  type LuaValue,
  type TemplateEngine,
  type TemplateSyntax,
} from '@runner/plugin-sdk';
import type { LoopItem, TaskDefinition } from './workflow-types.js';

/** One execution of a task: a loop item on an agent (or locally). */
export interface Unit {
  /** Position in the run's record. */
  seq: number;
  /** `build`, `per-host[web-1]`, `ship@web-2`. */
  name: string;
  task: TaskDefinition;
  item?: LoopItem;
  /** 1-based; present with `item`. */
  loopIndex?: number;
  /**
   * Where it runs: none = this process; one agent; or, for failover, the candidates in order,
   * the first reachable one taking the task.
   */
  agents: string[];
  failover: boolean;
}

export interface ExpandContext {
  template: TemplateEngine;
  syntax: TemplateSyntax;
  /** The template context every unit of the task shares (vars, values, tasks, ...). */
  base: Record<string, unknown>;
  /** `runner run --delegate-to`: agents for every task that names none. */
  runAgents?: readonly string[];
  delegator?: AgentDelegator;
  /** The agents rendered `delegate_to` names stand for (`group:web` -> its members); throws for an unknown group. */
  expandAgents(names: string[]): string[];
  loopItemsFromText(text: string): LoopItem[];
  /** Next record position. */
  nextSeq(): number;
  workflowName: string;
  /** Rotation state of round_robin, per workflow and task, kept across runs. */
  rotation: Map<string, number>;
  /** What bounds rendering the task's templates: its timeout, the run's signal, its memory limit. */
  bounds(task: TaskDefinition): RenderBounds;
}

/** BoundedRenderOptions without what each rendering names. */
export type RenderBounds = Omit<BoundedRenderOptions, 'syntax' | 'name'>;

/** Renders a loop's items: a template string gives its items, strings in a literal list render. */
export async function loopItems(task: TaskDefinition, ctx: ExpandContext): Promise<LoopItem[] | undefined> {
  if (task.loop === undefined) return undefined;
  const options = { ...ctx.bounds(task), syntax: ctx.syntax, name: `task ${task.name} loop` };
  if (typeof task.loop === 'string')
    return ctx.loopItemsFromText(await ctx.template.renderBounded(task.loop, ctx.base, options));
  const renderDeep = async (value: unknown): Promise<unknown> => {
    if (typeof value === 'string')
      return hasTemplate(value) ? ctx.template.renderBounded(value, ctx.base, options) : value;
    if (Array.isArray(value)) return Promise.all(value.map(renderDeep));
    if (value && typeof value === 'object')
      return Object.fromEntries(
        await Promise.all(Object.entries(value).map(async ([k, v]) => [k, await renderDeep(v)] as const)),
      );
    return value;
  };
  return (await Promise.all(task.loop.map(renderDeep))) as LoopItem[];
}

export function hasTemplate(text: string): boolean {
  return text.includes('{{') || text.includes('{%');
}

/** How a loop item is shown in a unit's name: scalars as written, mappings by name/host/id or index. */
export function itemLabel(item: LoopItem, index: number): string {
  if (item !== null && typeof item === 'object') {
    const named = item.name ?? item.host ?? item.id;
    return typeof named === 'string' || typeof named === 'number' ? String(named) : String(index);
  }
  return String(item);
}

/**
 * Expands a task into its units: one per loop item (or one), times the agents its delegation
 * strategy picks. Agent names that are templates render per item. Unknown agents fail here, before
 * anything of the task starts.
 */
export async function expandTask(task: TaskDefinition, ctx: ExpandContext): Promise<Unit[]> {
  const items = await loopItems(task, ctx);
  const bounds = ctx.bounds(task);
  const iterations: { item?: LoopItem; loopIndex?: number; context: Record<string, unknown> }[] = items
    ? items.map((item, i) => ({
        item,
        loopIndex: i + 1,
        context: { ...ctx.base, item: item as LuaValue, loop_index: i + 1 },
      }))
    : [{ context: ctx.base }];
  const entries = task.delegateTo ?? (ctx.runAgents?.length ? [...ctx.runAgents] : undefined);
  const units: Unit[] = [];
  for (const { item, loopIndex, context } of iterations) {
    const label = items ? `${task.name}[${itemLabel(item as LoopItem, loopIndex as number)}]` : task.name;
    if (!entries) {
      units.push({ seq: ctx.nextSeq(), name: label, task, item, loopIndex, agents: [], failover: false });
      continue;
    }
    const name = `task ${task.name} delegate_to`;
    const rendered = (
      await Promise.all(
        entries.map(async (entry) =>
          hasTemplate(entry)
            ? ctx
                .loopItemsFromText(
                  await ctx.template.renderBounded(entry, context, { ...bounds, syntax: ctx.syntax, name }),
                )
                .map(String)
            : [entry],
        ),
      )
    ).flat();
    let agents: string[];
    try {
      // Literal groups were expanded at the run's start; a template may render to one now.
      agents = ctx.expandAgents(rendered);
    } catch (error) {
      throw new InvalidInputError(`task ${task.name}: delegate_to: ${(error as Error).message}`);
    }
    if (agents.length === 0) throw new InvalidInputError(`task ${task.name}: delegate_to rendered to no agent`);
    // `localhost` is the master's own host whatever agents exist (no agent may enrol under it).
    if (agents.every(isMasterHost)) {
      units.push({ seq: ctx.nextSeq(), name: label, task, item, loopIndex, agents: [], failover: false });
      continue;
    }
    if (task.delegation.strategy === 'failover' && agents.some(isMasterHost))
      throw new InvalidInputError(
        `task ${task.name}: delegate_to: localhost (the master) cannot be a failover target; list agents only`,
      );
    for (const agent of agents.filter((a) => !isMasterHost(a))) {
      if (!ctx.delegator) {
        throw new InvalidInputError(
          `task ${task.name}: cannot delegate to agent "${agent}": no agent transport in this process (delegation runs on a master: start \`runner server\` and set RUNNER_MASTER_ADDR)`,
        );
      }
      // Names known before the run were checked then (agent-check.ts); this catches rendered ones.
      if (!ctx.delegator.agent(agent))
        throw new InvalidInputError(
          `task ${task.name}: unknown agent "${agent}"${didYouMean(agent, ctx.delegator.names?.() ?? [])}`,
        );
    }
    const withAgent = (agent: string) => (agents.length > 1 ? `${label}@${agent}` : label);
    /** A unit bound to one agent, which must be online now. */
    const onOne = (agent: string) => {
      if (isMasterHost(agent)) {
        units.push({
          seq: ctx.nextSeq(),
          name: withAgent(MASTER_HOST),
          task,
          item,
          loopIndex,
          agents: [],
          failover: false,
        });
        return;
      }
      if (!ctx.delegator?.isAvailable(agent))
        throw new InvalidInputError(`task ${task.name}: agent "${agent}" is offline`);
      units.push({
        seq: ctx.nextSeq(),
        name: withAgent(agent),
        task,
        item,
        loopIndex,
        agents: [agent],
        failover: false,
      });
    };
    switch (task.delegation.strategy) {
      case 'all':
        for (const agent of agents) onOne(agent);
        break;
      case 'round_robin': {
        // Keyed by workflow and task and kept by the engine, so it rotates across runs too.
        const key = `${ctx.workflowName}:${task.name}`;
        const turn = ctx.rotation.get(key) ?? 0;
        ctx.rotation.set(key, turn + 1);
        onOne(agents[turn % agents.length]);
        break;
      }
      case 'failover':
        units.push({ seq: ctx.nextSeq(), name: label, task, item, loopIndex, agents, failover: true });
        break;
      case 'conditional': {
        const condition = task.delegation.when;
        const options = { ...bounds, syntax: ctx.syntax, name: `task ${task.name} delegation when` };
        const picked = await Promise.all(
          agents.map((agent) =>
            ctx.template.evaluateBounded(
              condition,
              { ...context, agent: ctx.delegator?.agent(agent) as unknown as LuaValue },
              options,
            ),
          ),
        );
        for (const agent of agents.filter((_, i) => picked[i])) onOne(agent);
        break;
      }
    }
  }
  return units;
}
