import { reply, serve, type HttpRouter } from '@runner/plugin-sdk';
import * as api from './api.js';
import type { SchedulerService } from './service.js';

/** `/api/v1/scheduler/jobs`: list, add, show, change, remove, enable, disable, run now, history. */
export function registerSchedulerRoutes(router: HttpRouter, service: SchedulerService): void {
  router.add(serve(api.getSchedulerJobs, () => service.list()));
  router.add(serve(api.postSchedulerJobs, async ({ body }) => reply(201, await service.create(body))));
  router.add(serve(api.getSchedulerJobsName, ({ params }) => service.get(params.name)));
  router.add(serve(api.patchSchedulerJobsName, ({ params, body }) => service.update(params.name, body)));
  router.add(
    serve(api.deleteSchedulerJobsName, async ({ params }) => {
      await service.remove(params.name);
      return undefined;
    }),
  );
  router.add(serve(api.postSchedulerJobsNameEnable, ({ params }) => service.setEnabled(params.name, true)));
  router.add(serve(api.postSchedulerJobsNameDisable, ({ params }) => service.setEnabled(params.name, false)));
  router.add(
    serve(api.postSchedulerJobsNameRun, async ({ params, principal }) =>
      reply(202, await service.runNow(params.name, principal?.name ?? 'anonymous')),
    ),
  );
  router.add(
    serve(api.getSchedulerJobsNameHistory, ({ params, query }) =>
      service.history(params.name, query.limit, query.offset),
    ),
  );
}
