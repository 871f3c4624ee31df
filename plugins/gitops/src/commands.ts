import { resourceAction, resourceCommand, type CommandSpec } from '@runner/plugin-sdk';
import * as api from './api.js';

const short = (id: string | null | undefined) => (id ? id.slice(0, 12) : '-');
const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

type Changes = { name: string; change: string }[];
const listed = (title: string, changes: Changes) =>
  changes.length === 0 ? '' : `${title}:\n${changes.map((c) => `  ${c.change.padEnd(8)} ${c.name}\n`).join('')}`;

/** `runner gitops sync | status | diff`: each one of the plugin's routes. */
export const gitopsCommand: CommandSpec = resourceCommand({
  name: 'gitops',
  description: 'flows, hooks and schedules from a git repository: sync, status (drift), diff',
  actions: [
    resourceAction(api.postGitopsSync, {
      name: 'sync',
      description: "apply the branch's head, all or nothing (a broken workflow changes nothing)",
      timeoutMs: 300_000,
      text: (answer) => {
        const { commit } = answer;
        const total = answer.flows.length + answer.hooks.length + answer.schedules.length;
        return (
          `synced ${short(commit.id)} "${commit.message}" by ${commit.author}` +
          (answer.previous_commit && answer.previous_commit !== commit.id
            ? ` (was ${short(answer.previous_commit)})`
            : '') +
          `\n` +
          (total === 0
            ? 'nothing changed\n'
            : listed(
                'flows',
                answer.flows.map((f) => ({ ...f, name: f.version ? `${f.name} (version ${f.version})` : f.name })),
              ) +
              listed('hooks', answer.hooks) +
              listed('schedules', answer.schedules))
        );
      },
    }),
    resourceAction(api.getGitopsStatus, {
      name: 'status',
      description: 'the applied commit and the flows edited outside git since (drift)',
      exitCode: (answer) => (answer.drift.length > 0 ? 3 : 0),
      text: (answer) => {
        if (!answer.configured) return 'GitOps is off: set gitops.url (and gitops.branch, gitops.path)\n';
        const lines = [`repository: ${answer.url} ${answer.branch}${answer.path ? ` ${answer.path}` : ''}`];
        const applied = answer.applied;
        lines.push(
          applied
            ? `applied:    ${short(applied.commit)} "${applied.message}" by ${applied.author}, synced ${applied.at} by ${applied.by}`
            : 'applied:    nothing yet (run runner gitops sync)',
        );
        if (answer.syncing)
          lines.push(`syncing:    since ${answer.syncing.since} on ${answer.syncing.master} (${answer.syncing.by})`);
        if (answer.drift.length === 0) lines.push('drift:      none');
        else {
          lines.push(
            `drift:      ${count(answer.drift.length, 'flow')} changed outside git (the next sync overwrites them)`,
          );
          for (const d of answer.drift)
            lines.push(
              d.current_version === null
                ? `  ${d.flow}: deleted (synced version ${d.applied_version})`
                : `  ${d.flow}: version ${d.applied_version} -> ${d.current_version}: ${d.edits.map((e) => `${e.version} by ${e.author || 'unknown'}`).join(', ')}`,
            );
        }
        return `${lines.join('\n')}\n`;
      },
    }),
    resourceAction(api.getGitopsDiff, {
      name: 'diff',
      description: "what a sync of the branch's head would change, with each flow's unified diff",
      timeoutMs: 300_000,
      exitCode: (answer) => (answer.problems.length > 0 ? 1 : 0),
      text: (answer) => {
        const head = `${short(answer.commit.id)} "${answer.commit.message}" (applied: ${short(answer.applied_commit)})\n`;
        const problems = answer.problems.length
          ? `a sync would change nothing until these are fixed:\n${answer.problems.map((p) => `  ${p}\n`).join('')}`
          : '';
        const total = answer.flows.length + answer.hooks.length + answer.schedules.length;
        if (total === 0) return `${head}${problems}${problems ? '' : 'nothing to sync\n'}`;
        return (
          head +
          problems +
          listed('flows', answer.flows) +
          listed('hooks', answer.hooks) +
          listed('schedules', answer.schedules) +
          answer.flows.map((f) => `\n${f.unified}`).join('')
        );
      },
    }),
  ],
});
