/** Sample payloads for `POST /hooks/:id/test` without a payload: the shapes the README documents. */
const now = () => Math.floor(Date.now() / 1000);

export function sampleEventType(pattern: string): string {
  if (pattern === '*') return 'workflow.failed';
  if (pattern.endsWith('.*')) return `${pattern.slice(0, -2)}.${pattern.startsWith('agent.') ? 'connected' : 'failed'}`;
  return pattern;
}

export function samplePayload(type: string): Record<string, unknown> {
  const [family, what] = type.split('.');
  if (family === 'workflow')
    return {
      workflow_name: 'sample',
      run_id: 'r-sample',
      status: what === 'started' ? 'running' : what === 'failed' ? 'failed' : 'succeeded',
      duration: what === 'started' ? 0 : 1.5,
      started_at: now() - 2,
      completed_at: what === 'started' ? 0 : now(),
    };
  if (family === 'task')
    return {
      workflow_name: 'sample',
      run_id: 'r-sample',
      task_name: 'build',
      agent: 'localhost',
      status: what === 'started' ? 'running' : what === 'failed' ? 'failed' : 'succeeded',
      attempt: 1,
      duration: what === 'started' ? 0 : 0.5,
      ...(what === 'failed' ? { error: 'sample failure' } : {}),
    };
  if (type === 'agent.status_changed')
    return {
      agent_name: 'web-1',
      address: '10.0.0.5:50053',
      status: 'warning',
      previous_status: 'online',
      reason: 'memory at 93.4% (above 80%)',
    };
  if (family === 'agent')
    return { agent_name: 'web-1', address: '10.0.0.5:50053', status: what === 'disconnected' ? 'offline' : 'online' };
  return { name: 'sample' };
}
