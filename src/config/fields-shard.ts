/**
 * tokenload's options for one run spread over several processes (AIPerf has none): which share of
 * the work this process runs (`--shard-index i --shard-count n`, shard/shard-run.ts) and the absolute
 * time its schedule starts at (`--start-at`); plus their cross-field rule.
 */
import { z } from 'zod';
import { option } from '../util/option-meta.js';

/** `--start-at` as ISO 8601 text: a date, a time to the minute or finer, and an explicit zone. */
const ISO_WITH_ZONE =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-](\d{2}):(\d{2}))$/;

/** Epoch ms below this are refused as `--start-at` (2001-09-09): a value in seconds is a mistake. */
const EPOCH_MS_FLOOR = 1e12;

const MONTHS = 'January February March April May June July August September October November December'.split(
  ' ',
);

/**
 * Why ISO text with a zone names no real time (`Date.parse` rolls February 30 over to March 2, and
 * takes hour 24); null when it names one, or is not ISO text with a zone at all.
 */
function calendarProblem(text: string): string | null {
  const m = ISO_WITH_ZONE.exec(text);
  if (m === null) return null;
  const n = (i: number): number => Number(m[i] ?? 0);
  const [year, month, day] = [n(1), n(2), n(3)];
  if (month < 1 || month > 12) return `there is no month ${m[2]}`;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > days) return `${MONTHS[month - 1]} ${year} has no day ${m[3]} (it has ${days})`;
  if (n(4) > 23 || n(5) > 59 || n(6) > 59)
    return `${m[4]}:${m[5]}${m[6] === undefined ? '' : `:${m[6]}`} is not a time of day`;
  if (n(8) > 23 || n(9) > 59) return `${m[7]} is not a zone offset`;
  return null;
}

/**
 * `--start-at` as typed (ISO 8601 with a zone naming a real date and time, or epoch ms as a number
 * or digits) → epoch ms; a value that is neither becomes the issue. Numbers pass through, so a
 * resolved configuration parses to itself.
 */
const startAt = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const digits = typeof v === 'string' && /^\d+$/.test(v);
  const iso = typeof v === 'string' && ISO_WITH_ZONE.test(v);
  const problem = typeof v === 'string' && iso ? calendarProblem(v) : null;
  const ms =
    typeof v === 'number' ? v : digits ? Number(v) : iso && problem === null ? Date.parse(v) : Number.NaN;
  if (Number.isFinite(ms) && ms >= EPOCH_MS_FLOOR) return Math.round(ms);
  ctx.addIssue({
    code: 'custom',
    message: `expected an ISO 8601 time with a zone (2025-06-01T12:00:00Z) or epoch milliseconds, got ${JSON.stringify(v)}${problem === null ? '' : `: ${problem}`}`,
  });
  return z.NEVER;
});

/** `--shard-index`, `--shard-count`, `--start-at`. */
export const shardFields = {
  /** `--shard-index`: 0-based index of this process's share (with `--shard-count`). */
  shardIndex: option(z.number().int().min(0).optional(), {
    flag: 'shard-index',
    unit: 'i',
    help: 'run share i (0-based) of the work split over --shard-count processes: whole sessions by a hash of their id, the concurrency, rate and request count divided',
  }),
  /** `--shard-count`: how many processes share the work (with `--shard-index`). */
  shardCount: option(z.number().int().min(1).optional(), {
    flag: 'shard-count',
    unit: 'n',
    help: 'number of processes the work is split over (with --shard-index)',
  }),
  /** `--start-at`: epoch ms the schedule's time zero is anchored at; this process waits for it. */
  startAtMs: option(startAt.optional(), {
    flag: 'start-at',
    unit: 'time',
    help: 'start the schedule at this absolute time (ISO 8601 with a zone, or epoch ms; at most 24 h ahead): start-up is done first, then the run waits for it',
  }),
};
