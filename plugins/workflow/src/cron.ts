import { InvalidInputError } from '@runner/plugin-sdk';

/** A parsed five-field cron expression: the values each field allows, ascending. */
export interface CronSchedule {
  expression: string;
  minutes: number[];
  hours: number[];
  daysOfMonth: number[];
  months: number[];
  /** 0 = Sunday … 6 = Saturday. */
  daysOfWeek: number[];
  /**
   * Whether day-of-month / day-of-week begin with `*`. As in Vixie cron, when both fields are
   * restricted a day matches if EITHER matches; when one starts with `*`, both must match.
   */
  dayOfMonthStar: boolean;
  dayOfWeekStar: boolean;
}

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
  hint?: string;
}

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  {
    name: 'month',
    min: 1,
    max: 12,
    names: ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'],
  },
  {
    name: 'day-of-week',
    min: 0,
    max: 6,
    names: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'],
    hint: ' (Sunday is 0)',
  },
];

class FieldError extends Error {}

function value(text: string, field: FieldSpec): number {
  const named = field.names?.indexOf(text.toLowerCase()) ?? -1;
  if (named >= 0) return named + field.min;
  if (!/^\d+$/.test(text)) {
    const names = field.names ? ` or a name (${field.names[0]}-${field.names[field.names.length - 1]})` : '';
    throw new FieldError(`"${text}" is not a number${names}`);
  }
  const n = Number(text);
  if (n < field.min || n > field.max) {
    throw new FieldError(`${n} is out of range ${field.min}-${field.max}${field.hint ?? ''}`);
  }
  return n;
}

function expandField(text: string, field: FieldSpec): number[] {
  const out = new Set<number>();
  for (const part of text.split(',')) {
    if (part === '') throw new FieldError(`empty list item in "${text}"`);
    const [rangeText, stepText, extra] = part.split('/');
    if (extra !== undefined) throw new FieldError(`"${part}" has more than one step`);
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) === 0) {
        throw new FieldError(`step must be a positive integer, found "${stepText}"`);
      }
      step = Number(stepText);
    }
    let low: number;
    let high: number;
    if (rangeText === '*') {
      low = field.min;
      high = field.max;
    } else if (rangeText.includes('-')) {
      const [a, b, more] = rangeText.split('-');
      if (more !== undefined || a === '' || b === '') throw new FieldError(`"${rangeText}" is not a range`);
      low = value(a, field);
      high = value(b, field);
      if (low > high) throw new FieldError(`range ${a}-${b} is reversed`);
    } else {
      low = value(rangeText, field);
      // `5/15` means "from 5 to the end, every 15", as in most cron implementations.
      high = stepText === undefined ? low : field.max;
    }
    for (let n = low; n <= high; n += step) out.add(n);
  }
  return [...out].sort((a, b) => a - b);
}

/**
 * Parses a five-field cron expression (minute hour day-of-month month day-of-week, Sunday = 0)
 * with `*`, lists (`1,15`), ranges (`1-5`), steps (`*\/15`, `0-30/10`, `5/15`) and month and day
 * names (`jan`, `mon`). Throws an InvalidInputError naming the field at fault.
 */
export function parseCron(expression: string): CronSchedule {
  const fields = expression
    .trim()
    .split(/\s+/)
    .filter((f) => f !== '');
  const quoted = JSON.stringify(expression);
  if (fields.length !== 5) {
    throw new InvalidInputError(
      `invalid cron expression ${quoted}: expected 5 fields (minute hour day-of-month month day-of-week), found ${fields.length}`,
    );
  }
  const sets = fields.map((text, i) => {
    try {
      return expandField(text, FIELDS[i]);
    } catch (error) {
      if (!(error instanceof FieldError)) throw error;
      throw new InvalidInputError(`invalid cron expression ${quoted}: ${FIELDS[i].name}: ${error.message}`);
    }
  });
  return {
    expression,
    minutes: sets[0],
    hours: sets[1],
    daysOfMonth: sets[2],
    months: sets[3],
    daysOfWeek: sets[4],
    dayOfMonthStar: fields[2].startsWith('*'),
    dayOfWeekStar: fields[4].startsWith('*'),
  };
}
