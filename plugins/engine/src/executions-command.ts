import { connectMaster, type CommandContext, type CommandInput } from '@runner/plugin-sdk';
import type { ApiRun } from './api-shape.js';

/**
 * `runner executions cancel <id>`: asks the master to cancel the run and waits for its end. Exits 0
 * once the run is cancelled (also when it already was), 1 when it had ended otherwise.
 */
export async function cancelCommand({ args, options }: CommandInput, ctx: CommandContext): Promise<number> {
  const [id] = args;
  const master = await connectMaster(ctx, options.masterUrl);
  // The master answers once the run has ended: its tasks stop within the kill grace, or as soon as
  // an agent reports back.
  const run = await master.call<ApiRun>('POST', `/executions/${encodeURIComponent(id)}/cancel`, { timeoutMs: 60_000 });
  if (options.output === 'json') ctx.stdout.write(`${JSON.stringify(run)}\n`);
  else if (run.status === 'cancelled')
    ctx.stdout.write(
      `run ${run.id} (${run.workflow_name}) cancelled${run.cancelled_by ? ` by ${run.cancelled_by}` : ''}\n`,
    );
  else ctx.stderr.write(`runner: run ${run.id} (${run.workflow_name}) had already ended: ${run.status}\n`);
  return run.status === 'cancelled' ? 0 : 1;
}
