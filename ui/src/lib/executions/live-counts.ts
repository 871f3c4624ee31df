import { api, data } from '$lib/api/client';

/**
 * The task counts of running runs, by run id, from each run's own record: a list's counts of a
 * running run are written only when it ends, while the record counts its units so far and the
 * tasks not started yet (`pending`), which is what `n of N tasks` needs. A run that cannot be read
 * (it ended and was removed meanwhile) is left out: its row shows what the list has.
 */
export async function liveCounts(ids: string[]): Promise<Map<string, Record<string, number>>> {
  const answers = await Promise.all(
    ids.map((id) =>
      data(api.GET('/api/v1/executions/{id}', { params: { path: { id }, query: { log: false } } })).then(
        (run) => [id, run.counts] as const,
        () => undefined,
      ),
    ),
  );
  return new Map(answers.filter((a) => a !== undefined));
}
