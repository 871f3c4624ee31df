// os.date's formatting: C's strftime in the "C" locale with the C99 conversions Lua 5.3 accepts.
// fengari's own os.date prints the "!" of a UTC format and ignores it, and writes %t as a backspace.

/** The broken-down time of `struct tm`, in UTC or local time. */
export interface BrokenDownTime {
  year: number;
  /** 1..12 */
  month: number;
  day: number;
  hour: number;
  min: number;
  sec: number;
  /** 0 = Sunday */
  wday: number;
  /** 1..366 */
  yday: number;
  isdst: boolean;
  /** Minutes east of UTC. */
  offset: number;
  zone: string;
}

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

export function brokenDown(date: Date, utc: boolean): BrokenDownTime {
  const year = utc ? date.getUTCFullYear() : date.getFullYear();
  const month = (utc ? date.getUTCMonth() : date.getMonth()) + 1;
  const day = utc ? date.getUTCDate() : date.getDate();
  const startOfYear = Date.UTC(year, 0, 1);
  const yday = Math.floor((Date.UTC(year, month - 1, day) - startOfYear) / 86_400_000) + 1;
  const offset = utc ? 0 : -date.getTimezoneOffset();
  // Daylight saving time is on when the offset is larger than the smaller of January's and July's.
  const standard = utc
    ? 0
    : -Math.max(new Date(year, 0, 1).getTimezoneOffset(), new Date(year, 6, 1).getTimezoneOffset());
  return {
    year,
    month,
    day,
    hour: utc ? date.getUTCHours() : date.getHours(),
    min: utc ? date.getUTCMinutes() : date.getMinutes(),
    sec: utc ? date.getUTCSeconds() : date.getSeconds(),
    wday: utc ? date.getUTCDay() : date.getDay(),
    yday,
    isdst: !utc && offset > standard,
    offset,
    zone: utc ? 'GMT' : zoneName(date),
  };
}

function zoneName(date: Date): string {
  const part = new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' })
    .formatToParts(date)
    .find((p) => p.type === 'timeZoneName');
  return part?.value ?? '';
}

function pad(n: number, width: number, fill = '0'): string {
  return String(n).padStart(width, fill);
}

/** ISO 8601 week number and week-based year. */
function isoWeek(t: BrokenDownTime): { week: number; year: number } {
  const isoDay = t.wday === 0 ? 7 : t.wday;
  // The Thursday of this week decides the year the week belongs to.
  const thursday = t.yday - isoDay + 4;
  const daysIn = (y: number) => (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 366 : 365);
  if (thursday < 1) {
    const prev = t.year - 1;
    return { year: prev, week: Math.floor((thursday + daysIn(prev) - 1) / 7) + 1 };
  }
  if (thursday > daysIn(t.year)) return { year: t.year + 1, week: 1 };
  return { year: t.year, week: Math.floor((thursday - 1) / 7) + 1 };
}

/** Conversions Lua 5.3 accepts (LUA_STRFTIMEOPTIONS for C99), without the modifier. */
const SINGLE = 'aAbBcCdDeFgGhHIjmMnprRStTuUVwWxXyYzZ%';
const WITH_E = 'cCxXyY';
const WITH_O = 'deHImMSuUVwWy';

/** Thrown for a conversion Lua would reject; the caller reports it as a bad argument. */
export class InvalidConversionError extends Error {}

export function strftime(format: string, t: BrokenDownTime): string {
  let out = '';
  for (let i = 0; i < format.length; i++) {
    const c = format[i];
    if (c !== '%') {
      out += c;
      continue;
    }
    let conv = format[++i];
    if (conv === 'E' || conv === 'O') {
      const next = format[i + 1];
      if (next === undefined || !(conv === 'E' ? WITH_E : WITH_O).includes(next)) {
        throw new InvalidConversionError(`invalid conversion specifier '%${format.slice(i, i + 2)}'`);
      }
      conv = format[++i];
    } else if (conv === undefined || !SINGLE.includes(conv)) {
      throw new InvalidConversionError(`invalid conversion specifier '%${conv ?? ''}'`);
    }
    out += convert(conv, t);
  }
  return out;
}

function convert(conv: string, t: BrokenDownTime): string {
  const hour12 = ((t.hour + 11) % 12) + 1;
  switch (conv) {
    case 'a':
      return DAYS[t.wday].slice(0, 3);
    case 'A':
      return DAYS[t.wday];
    case 'b':
    case 'h':
      return MONTHS[t.month - 1].slice(0, 3);
    case 'B':
      return MONTHS[t.month - 1];
    case 'c':
      return strftime('%a %b %e %H:%M:%S %Y', t);
    case 'C':
      return pad(Math.floor(t.year / 100), 2);
    case 'd':
      return pad(t.day, 2);
    case 'D':
    case 'x':
      return strftime('%m/%d/%y', t);
    case 'e':
      return pad(t.day, 2, ' ');
    case 'F':
      return strftime('%Y-%m-%d', t);
    case 'g':
      return pad(isoWeek(t).year % 100, 2);
    case 'G':
      return String(isoWeek(t).year);
    case 'H':
      return pad(t.hour, 2);
    case 'I':
      return pad(hour12, 2);
    case 'j':
      return pad(t.yday, 3);
    case 'm':
      return pad(t.month, 2);
    case 'M':
      return pad(t.min, 2);
    case 'n':
      return '\n';
    case 'p':
      return t.hour < 12 ? 'AM' : 'PM';
    case 'r':
      return strftime('%I:%M:%S %p', t);
    case 'R':
      return strftime('%H:%M', t);
    case 'S':
      return pad(t.sec, 2);
    case 't':
      return '\t';
    case 'T':
    case 'X':
      return strftime('%H:%M:%S', t);
    case 'u':
      return String(t.wday === 0 ? 7 : t.wday);
    case 'U':
      return pad(Math.floor((t.yday - 1 + 7 - t.wday) / 7), 2);
    case 'V':
      return pad(isoWeek(t).week, 2);
    case 'w':
      return String(t.wday);
    case 'W':
      return pad(Math.floor((t.yday - 1 + 7 - ((t.wday + 6) % 7)) / 7), 2);
    case 'y':
      return pad(t.year % 100, 2);
    case 'Y':
      return String(t.year);
    case 'z': {
      const sign = t.offset < 0 ? '-' : '+';
      const abs = Math.abs(t.offset);
      return `${sign}${pad(Math.floor(abs / 60), 2)}${pad(abs % 60, 2)}`;
    }
    case 'Z':
      return t.zone;
    default:
      return '%';
  }
}
