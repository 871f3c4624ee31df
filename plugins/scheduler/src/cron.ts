import { CronExpressionParser, type CronExpression } from 'cron-parser';
import { InvalidInputError } from '@runner/plugin-sdk';

/**
 * A job's schedule: a five-field cron expression read in an IANA time zone, and the slots it
 * gives. cron-parser does the matching; this module adds the rule that each wall-clock time fires
 * once (see the README, "Daylight saving time"):
 * - in a repeated hour (clocks go back) cron-parser matches a wall-clock time twice, once per
 *   offset; only the first is a slot;
 * - in a gap (clocks go forward) cron-parser moves a time that names the skipped hour to the same
 *   distance past the gap (02:30 -> 03:30) and gives nothing for a schedule every hour (the hour
 *   did not happen); both are kept as they are.
 */
export interface CronSchedule {
  expression: string;
  timezone: string;
}

/** The fields in the order a five-field expression names them, for errors. */
const FIELDS = 'minute hour day-of-month month day-of-week';

/** Whether the runtime knows the IANA zone. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone.length > 0;
  } catch {
    return false;
  }
}

/** Checks an expression and zone; throws an InvalidInputError naming the field at fault. */
export function checkSchedule(schedule: CronSchedule): void {
  const fields = schedule.expression.trim().split(/\s+/);
  if (fields.length !== 5)
    throw new InvalidInputError(
      `schedule: "${schedule.expression}" has ${fields.length} field${fields.length === 1 ? '' : 's'}; a schedule has five (${FIELDS}), e.g. "*/5 * * * *"`,
      { field: 'schedule' },
    );
  if (!isTimeZone(schedule.timezone))
    throw new InvalidInputError(`timezone: "${schedule.timezone}" is not an IANA time zone (e.g. Europe/Berlin, UTC)`, {
      field: 'timezone',
    });
  try {
    CronExpressionParser.parse(schedule.expression, { tz: schedule.timezone, strict: false });
  } catch (error) {
    throw new InvalidInputError(
      `schedule: "${schedule.expression}" is not a cron expression: ${(error as Error).message}`,
      {
        field: 'schedule',
      },
    );
  }
}

const wallClocks = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock time of `ms` in `zone`, to the minute (`2026-10-25 02:30`). */
export function wallClock(ms: number, zone: string): string {
  let format = wallClocks.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('sv-SE', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    wallClocks.set(zone, format);
  }
  return format.format(ms);
}

/** Offsets between standard and summer time seen in the tz database (Lord Howe's is 30 minutes). */
const SHIFTS_MS = [30 * 60_000, 60 * 60_000, 120 * 60_000];

/** True when the wall-clock time of `ms` already happened earlier (the second pass of a repeated hour). */
function isRepeat(ms: number, zone: string): boolean {
  const wall = wallClock(ms, zone);
  return SHIFTS_MS.some((shift) => wallClock(ms - shift, zone) === wall);
}

function iterate(schedule: CronSchedule, from: number): CronExpression {
  return CronExpressionParser.parse(schedule.expression, { tz: schedule.timezone, currentDate: new Date(from) });
}

/** The first `count` slots strictly after `after` (ms since the epoch). */
export function nextSlots(schedule: CronSchedule, after: number, count: number): number[] {
  const slots: number[] = [];
  const it = iterate(schedule, after);
  // A bound on matches skipped as repeats: a repeated hour holds at most 60 of them per shift.
  for (let guard = 0; slots.length < count && guard < count + 200; guard++) {
    let ms: number;
    try {
      ms = it.next().getTime();
    } catch {
      break; // no later match (an expression such as 30 Feb never matches)
    }
    if (ms > after && !isRepeat(ms, schedule.timezone)) slots.push(ms);
  }
  return slots;
}

/**
 * The slots in (`after`, `until`], oldest first; at most the latest `limit` of them (a master down
 * for a month does not list every minute of it). `more` says whether older ones were left out.
 * Walking back (prev) finds where to begin; the slots are then taken forwards (next), since only
 * next() moves a time in a DST gap past the gap.
 */
export function slotsBetween(
  schedule: CronSchedule,
  after: number,
  until: number,
  limit: number,
): { slots: number[]; more: boolean } {
  let from = after;
  let more = false;
  const back = iterate(schedule, until + 1);
  for (let seen = 0; seen <= limit + 1; seen++) {
    let ms: number;
    try {
      ms = back.prev().getTime();
    } catch {
      break;
    }
    if (ms <= after) break;
    if (seen === limit + 1) {
      // Older slots than these are left out; start just before the oldest kept (minus a DST shift).
      from = Math.max(after, ms);
      more = true;
    }
  }
  const slots: number[] = [];
  const it = iterate(schedule, from);
  for (;;) {
    let ms: number;
    try {
      ms = it.next().getTime();
    } catch {
      break;
    }
    if (ms > until) break;
    if (ms > after && !isRepeat(ms, schedule.timezone)) slots.push(ms);
  }
  if (slots.length > limit) {
    more = true;
    slots.splice(0, slots.length - limit);
  }
  return { slots, more };
}
