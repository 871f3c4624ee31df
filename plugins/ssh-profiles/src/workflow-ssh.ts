import { RunnerError, type SshConnection, type SshProfiles } from '@runner/plugin-sdk';

/** The functions of the Lua `ssh` module. */
export type SshFunction = 'exec' | 'upload' | 'download';

/** Who acts, for the profile's audit log: the run's task, or the REPL. */
export function workflowActor(run: { workflow: string; runId: string; task: string } | undefined): string {
  return run ? `workflow:${run.workflow}/${run.runId}/${run.task}` : 'workflow:repl';
}

/**
 * One connection for one call of workflow code, wherever the script runs (the master's runtime, or
 * its local executor through a forwarded call): only a profile open to workflows, and only with its
 * pinned host key (connect without trust: workflow code never pins one). The connection closes when
 * `work` ends, or at once when `signal` aborts (the task was cancelled or timed out).
 */
export async function withWorkflowProfile<T>(
  profiles: SshProfiles,
  fn: SshFunction,
  name: string,
  actor: string,
  signal: AbortSignal,
  work: (connection: SshConnection) => Promise<T>,
): Promise<T> {
  const profile = await profiles.get(name);
  if (!profile.workflows)
    throw new RunnerError(
      'forbidden',
      `ssh.${fn}: SSH profile ${profile.name} is not open to workflows (an admin allows it: runner ssh update ${profile.name} ... --workflows)`,
      { status: 403 },
    );
  const connection = await profiles.connect(profile.name, { actor });
  const abort = () => connection.close();
  signal.addEventListener('abort', abort, { once: true });
  try {
    return await work(connection);
  } finally {
    signal.removeEventListener('abort', abort);
    connection.close();
  }
}
