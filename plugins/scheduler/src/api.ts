// The REST routes of the scheduler, declared without handlers: the build writes the OpenAPI
// document and the UI client from them, the CLI builds `runner scheduler ...` from them.
import { Permissions, declareRoute } from '@runner/plugin-sdk';
import {
  CreateJobBody,
  HistoryQuery,
  HistorySchema,
  JobListSchema,
  JobParams,
  JobSchema,
  SlotSchema,
  UpdateJobBody,
} from './schemas.js';

const tags = ['scheduler'];

export const getSchedulerJobs = declareRoute({
  method: 'GET',
  path: '/scheduler/jobs',
  summary: 'list scheduler jobs, each with its next 5 runs and latest slot',
  tags,
  permission: Permissions.scheduleView,
  responses: { 200: JobListSchema },
});

export const postSchedulerJobs = declareRoute({
  method: 'POST',
  path: '/scheduler/jobs',
  summary: 'add a job: a flow or workflow file started on a cron schedule',
  tags,
  permission: Permissions.scheduleManage,
  body: CreateJobBody,
  responses: { 201: JobSchema, 409: { description: 'a job of that name exists' } },
});

export const getSchedulerJobsName = declareRoute({
  method: 'GET',
  path: '/scheduler/jobs/:name',
  summary: 'one job with its next 5 runs',
  tags,
  permission: Permissions.scheduleView,
  params: JobParams,
  responses: { 200: JobSchema },
});

export const patchSchedulerJobsName = declareRoute({
  method: 'PATCH',
  path: '/scheduler/jobs/:name',
  summary: "change a job's fields (a new schedule or time zone counts from now)",
  tags,
  permission: Permissions.scheduleManage,
  params: JobParams,
  body: UpdateJobBody,
  responses: { 200: JobSchema },
});

export const deleteSchedulerJobsName = declareRoute({
  method: 'DELETE',
  path: '/scheduler/jobs/:name',
  summary: 'remove a job and its history (runs it started are kept)',
  tags,
  permission: Permissions.scheduleManage,
  params: JobParams,
  responses: { 204: { description: 'removed' } },
});

export const postSchedulerJobsNameEnable = declareRoute({
  method: 'POST',
  path: '/scheduler/jobs/:name/enable',
  summary: 'enable a job: it fires from now on (slots while it was disabled are not missed ones)',
  tags,
  permission: Permissions.scheduleManage,
  params: JobParams,
  responses: { 200: JobSchema },
});

export const postSchedulerJobsNameDisable = declareRoute({
  method: 'POST',
  path: '/scheduler/jobs/:name/disable',
  summary: 'disable a job: it fires nothing until enabled; a running run goes on',
  tags,
  permission: Permissions.scheduleManage,
  params: JobParams,
  responses: { 200: JobSchema },
});

export const postSchedulerJobsNameRun = declareRoute({
  method: 'POST',
  path: '/scheduler/jobs/:name/run',
  summary: 'run the job now (recorded as a manual slot; the overlap policy does not apply)',
  tags,
  permission: Permissions.scheduleManage,
  params: JobParams,
  responses: { 202: SlotSchema },
});

export const getSchedulerJobsNameHistory = declareRoute({
  method: 'GET',
  path: '/scheduler/jobs/:name/history',
  summary: "the job's slots, newest first: scheduled time, start, run, outcome",
  tags,
  permission: Permissions.scheduleView,
  params: JobParams,
  query: HistoryQuery,
  responses: { 200: HistorySchema },
});

export const routes = [
  getSchedulerJobs,
  postSchedulerJobs,
  getSchedulerJobsName,
  patchSchedulerJobsName,
  deleteSchedulerJobsName,
  postSchedulerJobsNameEnable,
  postSchedulerJobsNameDisable,
  postSchedulerJobsNameRun,
  getSchedulerJobsNameHistory,
];
