import { defineLuaModule } from '@runner/plugin-sdk';

/** Static declaration of the `metrics` module: `runner modules info metrics` prints it. */
export const metricsModule = defineLuaModule({
  name: 'metrics',
  description: 'Counters, gauges and timings from workflows, exported for Prometheus at /metrics',
  docs: `
Each name is a Prometheus name part (lower case letters, digits and _, starting with a letter, at
most 64 characters) and is exported with a prefix and a unit: metrics.inc("deploys") is
runner_workflow_deploys_total, metrics.set("queue_length", n) is runner_workflow_queue_length,
metrics.observe("backup", s) and metrics.time("backup", fn) are runner_workflow_backup_seconds.
Every series carries the label workflow (the running workflow's name) beside the labels given:
at most 4, named as metric names are, with string or number values of at most 64 characters.
A name keeps the kind and the label names of its first use; another use is an error.
Bounded: a workflow has at most 100 series over all its names and at most 200 names exist in all;
what passes a cap is dropped with a warning in the task's log. Ids (run ids, timestamps) do not
belong in labels: each value is a series kept until the process restarts.
In dry-run nothing is recorded. On a master the values are exported on its /metrics; on an agent
on the agent's own listener (agent.metrics_port); under runner run and in the local executor
(a master's local scripts that call modules) they are checked and recorded nowhere.`,
  functions: {
    inc: {
      args: [
        { name: 'name', type: 'string' },
        { name: 'labels', type: 'table', optional: true },
        { name: 'by', type: 'number', optional: true },
      ],
      result: 'nil',
      callsLua: false,
      description: 'Adds by (default 1, not negative) to the counter runner_workflow_<name>_total.',
      sideEffects: false,
      example: 'metrics.inc("deploys", { env = vars.env })',
    },
    set: {
      args: [
        { name: 'name', type: 'string' },
        { name: 'value', type: 'number' },
        { name: 'labels', type: 'table', optional: true },
      ],
      result: 'nil',
      callsLua: false,
      description: 'Sets the gauge runner_workflow_<name> to value.',
      sideEffects: false,
      example: 'metrics.set("queue_length", #items)',
    },
    observe: {
      args: [
        { name: 'name', type: 'string' },
        { name: 'seconds', type: 'number' },
        { name: 'labels', type: 'table', optional: true },
      ],
      result: 'nil',
      callsLua: false,
      description: 'Records seconds in the histogram runner_workflow_<name>_seconds.',
      sideEffects: false,
      example: 'metrics.observe("backup", elapsed, { db = "main" })',
    },
    time: {
      args: [
        { name: 'name', type: 'string' },
        { name: 'fn', type: 'function' },
        { name: 'labels', type: 'table', optional: true },
      ],
      result: '...',
      callsLua: true,
      description:
        "Calls fn, records the seconds it took in runner_workflow_<name>_seconds (also when it raises) and returns fn's results.",
      sideEffects: false,
      example: 'local ok = metrics.time("migration", function() return exec.run("./migrate").ok end)',
    },
  },
});
