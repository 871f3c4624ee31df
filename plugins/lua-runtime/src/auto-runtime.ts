import type { LuaRunOptions, LuaRunResult, LuaRuntime, LuaSession, LuaSessionOptions } from '@runner/plugin-sdk';
import type { ModuleRegistry } from './module-registry.js';
import { LuaRuntimeService } from './runtime.js';
import { chunkRules, classifyChunk, type ChunkRules, type Verdict } from './script-bounds.js';
import { WorkerLuaRuntime, type WorkerRuntimeOptions } from './worker-runtime.js';

/** Verdicts kept, by source text; past this the cache starts over (a workflow has a few scripts). */
const CACHE_LIMIT = 4096;

/**
 * `lua.isolation: auto`, the default: a task script that is provably bounded (script-bounds.ts)
 * runs inline, on the process's own thread, at inline's cost; any other runs in a worker thread,
 * where its memory and time cost only its worker. The decision is read from the compiled chunk
 * once per source text. Sessions (the REPL) run inline, as with the other modes.
 */
export class AutoLuaRuntime implements LuaRuntime {
  readonly #registry: ModuleRegistry;
  readonly #inline: LuaRuntimeService;
  readonly #workers: WorkerLuaRuntime;
  readonly #verdicts = new Map<string, Verdict>();
  readonly #unsubscribe: () => void;
  #rules: ChunkRules | null = null;

  constructor(registry: ModuleRegistry, options: WorkerRuntimeOptions = {}) {
    this.#registry = registry;
    this.#inline = new LuaRuntimeService(registry, options);
    this.#workers = new WorkerLuaRuntime(registry, options, this.#inline);
    // A module provided later changes what scripts may call.
    this.#unsubscribe = registry.onChange(() => {
      this.#rules = null;
      this.#verdicts.clear();
    });
  }

  /** Where `source` runs, and why not inline (for tests and diagnostics); throws on a syntax error. */
  placement(source: string): Verdict {
    let verdict = this.#verdicts.get(source);
    if (verdict === undefined) {
      this.#rules ??= chunkRules(this.#registry.list(), this.#inline.globalNames());
      verdict = classifyChunk(this.#inline.chunkProto(source, 'script'), this.#rules);
      if (this.#verdicts.size >= CACHE_LIMIT) this.#verdicts.clear();
      this.#verdicts.set(source, verdict);
    }
    return verdict;
  }

  /** The worker side, for its pool's figures. */
  get workers(): WorkerLuaRuntime {
    return this.#workers;
  }

  compile(source: string, chunkName: string): void {
    this.#inline.compile(source, chunkName);
    // A run's scripts are compiled before it starts: a script bound for a worker gets one started
    // meanwhile; a workload of bounded scripts never starts a worker.
    if (!this.placement(source).bounded) this.#workers.warm();
  }

  run(source: string, options: LuaRunOptions): Promise<LuaRunResult> {
    let bounded: boolean;
    try {
      bounded = this.placement(source).bounded;
    } catch {
      // A syntax error: inline reports it as every mode does, with the task's name.
      bounded = true;
    }
    return bounded ? this.#inline.run(source, options) : this.#workers.run(source, options);
  }

  createSession(options: LuaSessionOptions): LuaSession {
    return this.#inline.createSession(options);
  }

  sideEffectFree(source: string): boolean {
    return this.#inline.sideEffectFree(source);
  }

  close(): void {
    this.#unsubscribe();
    this.#workers.close();
    this.#inline.close();
  }
}
