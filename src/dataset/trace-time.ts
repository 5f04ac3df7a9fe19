/**
 * Exact parsing of the datetime strings in the Azure LLM inference traces. `Date.parse` keeps at most
 * 3 fractional digits, and the 2023 files carry 7 (`2023-11-16 18:17:03.9799600`, 100 ns), so the text
 * is parsed by hand into whole epoch milliseconds plus the nanoseconds inside that millisecond.
 *
 * Accepted forms (the Azure files in examples/traces and their public releases): `YYYY-MM-DD HH:MM:SS[.f{1,9}]` with a space or `T` separator,
 * optionally followed by `Z` or a `±HH:MM` / `±HHMM` offset (2024: `+00:00`, with or without a
 * fraction; 2025: `…T12:00:00.269Z`). A time without zone is taken as UTC; only differences between
 * rows matter.
 */

/** A point in time with nanosecond resolution, split so that no precision is lost in a double. */
export interface TraceInstant {
  /** Whole milliseconds since 1970-01-01T00:00:00Z (integer). */
  epochMs: number;
  /** Nanoseconds past `epochMs`, 0 ≤ ns < 1,000,000 (integer). */
  nsInMs: number;
}

const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/;

const NS_PER_MS = 1_000_000;

function zoneOffsetMs(zone: string | undefined): number | undefined {
  if (zone === undefined || zone === 'Z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2));
  if (hours > 23 || minutes > 59) return undefined;
  return sign * (hours * 60 + minutes) * 60_000;
}

/**
 * Parses a trace datetime.
 * @returns the instant, or undefined when the text is not one of the accepted forms or names an
 *   impossible date or time (month 13, February 30, 24:00, second 60).
 */
export function parseTraceDatetime(text: string): TraceInstant | undefined {
  const m = DATETIME.exec(text.trim());
  if (m === null) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const midnightMs = Date.UTC(year, month - 1, day);
  const check = new Date(midnightMs);
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) {
    return undefined;
  }
  const offsetMs = zoneOffsetMs(m[8]);
  if (offsetMs === undefined) return undefined;
  const fractionNs = Number((m[7] ?? '').padEnd(9, '0'));
  const wholeMs = Math.floor(fractionNs / NS_PER_MS);
  const epochMs = midnightMs + ((hour * 60 + minute) * 60 + second) * 1000 + wholeMs - offsetMs;
  return { epochMs, nsInMs: fractionNs - wholeMs * NS_PER_MS };
}

/**
 * Milliseconds from `origin` to `instant` (negative when earlier), computed in integer nanoseconds so
 * that e.g. 100 ns steps give clean values; exact for spans up to about 100 days.
 */
export function msBetween(origin: TraceInstant, instant: TraceInstant): number {
  const wholeMs = instant.epochMs - origin.epochMs;
  const ns = instant.nsInMs - origin.nsInMs;
  return Math.round(wholeMs * NS_PER_MS + ns) / NS_PER_MS;
}
