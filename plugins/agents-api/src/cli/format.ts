import { formatBytes, formatTable, type Agent, type AgentMetrics } from '@runner/plugin-sdk';

export function formatPercent(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(1)}%` : '-';
}

/** `3d 4h`, `2h 5m`, `4m 10s`, `12s`. */
export function formatUptime(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '-';
  const s = Math.floor(seconds);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

/** How long ago an ISO timestamp was, for a person: `12s ago`. */
export function formatAgo(iso: string, now = Date.now()): string {
  const at = Date.parse(iso);
  if (!Number.isFinite(at)) return 'never';
  return `${formatUptime(Math.max(0, (now - at) / 1000))} ago`;
}

export function agentTable(agents: Agent[], now = Date.now()): string {
  return formatTable(
    ['NAME', 'STATUS', 'ADDRESS', 'CPU', 'MEMORY', 'UPTIME', 'LAST HEARTBEAT', 'ENROLLED'],
    agents.map((a) => [
      a.name,
      a.status,
      a.address,
      formatPercent(a.cpu_usage),
      formatPercent(a.memory_usage),
      formatUptime(a.uptime),
      formatAgo(a.last_heartbeat, now),
      formatIdentity(a),
    ]),
  );
}

/**
 * Whether the agent has its own credential (agent identities): `revoked`, the date it was issued
 * (with the time when `full`), or `no` for an agent registered before identities.
 */
export function formatIdentity(agent: Agent, full = false): string {
  if (agent.revoked_at) return full ? `revoked ${agent.revoked_at}` : 'revoked';
  if (!agent.enrolled_at) return 'no';
  return full ? agent.enrolled_at : agent.enrolled_at.slice(0, 10);
}

export function agentDetail(agent: Agent, now = Date.now()): string {
  const labels = Object.entries(agent.labels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
  const rows: [string, string][] = [
    ['name', agent.name],
    ['status', agent.status],
    ['address', agent.address],
    ['hostname', agent.hostname ?? '-'],
    ['os', agent.os ?? '-'],
    ['version', agent.version ?? '-'],
    ['cpu', formatPercent(agent.cpu_usage)],
    ['memory', formatPercent(agent.memory_usage)],
    ['uptime', formatUptime(agent.uptime)],
    ['last heartbeat', `${agent.last_heartbeat || 'never'} (${formatAgo(agent.last_heartbeat, now)})`],
    ['registered', agent.registered_at ?? '-'],
    ['enrolled', formatIdentity(agent, true)],
    ['labels', labels || '-'],
    ['modules', agent.modules?.length ? `${agent.modules.length} (runner agent modules ${agent.name})` : '-'],
  ];
  return rows.map(([k, v]) => `${k.padEnd(15)}${v}`).join('\n') + '\n';
}

/** The metrics object as a block of lines (the `--watch` view redraws it). */
export function metricsBlock(name: string, m: AgentMetrics): string {
  const load = m.cpu.load_avg.map((l) => l.toFixed(2)).join(' ');
  return (
    [
      `agent ${name}, collected ${m.collected_at}`,
      `cpu        ${formatPercent(m.cpu.usage_percent).padStart(6)}  ${m.cpu.cores} cores, load ${load}`,
      `memory     ${formatPercent(m.memory.usage_percent).padStart(6)}  ${formatBytes(m.memory.used_bytes)} of ${formatBytes(m.memory.total_bytes)}`,
      `disk       ${formatPercent(m.disk.usage_percent).padStart(6)}  ${formatBytes(m.disk.used_bytes)} of ${formatBytes(m.disk.total_bytes)}`,
      `network    rx ${formatBytes(m.network.rx_bytes_per_sec)}/s, tx ${formatBytes(m.network.tx_bytes_per_sec)}/s`,
      `processes  ${m.processes}`,
      `uptime     ${formatUptime(m.uptime)}`,
    ].join('\n') + '\n'
  );
}

/** One sample on one line, for `--watch` when stdout is not a terminal (logs, pipes). */
export function metricsLine(m: AgentMetrics): string {
  return (
    `${m.collected_at} cpu ${formatPercent(m.cpu.usage_percent)} load ${m.cpu.load_avg.map((l) => l.toFixed(2)).join(' ')}` +
    ` mem ${formatPercent(m.memory.usage_percent)} disk ${formatPercent(m.disk.usage_percent)}` +
    ` rx ${formatBytes(m.network.rx_bytes_per_sec)}/s tx ${formatBytes(m.network.tx_bytes_per_sec)}/s procs ${m.processes}\n`
  );
}
