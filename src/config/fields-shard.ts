/**
 * tokenload's options for one run spread over several processes (AIPerf has none): which share of
 * the work this process runs (`--shard-index i --shard-count n`, shard/shard-run.ts) and the absolute
 * time its schedule starts at (`--start-at`); plus their cross-field rule.
 */
import { z } from 'zod';
import { option } from '../util/option-meta.js';

/** `--start-at` as ISO 8601 text: a date, a time to the minute or finer, and an explicit zone. */
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/** Epoch ms below this are refused as `--start-at` (2001-09-09): a value in seconds is a mistake. */
const EPOCH_MS_FLOOR = 1e12;

/**
 * `--start-at` as typed (ISO 8601 with a zone, or epoch ms as a number or digits) → epoch ms; a value
 * that is neither becomes the issue. Numbers pass through, so a resolved configuration parses to itself.
 */
const startAt = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const text = typeof v === 'string' ? v.trim() : '';
  const ms = typeof v === 'number' ? v : /^\d+$/.test(text) ? Number(text) : Date.parse(text);
  const iso = typeof v === 'number' || /^\d+$/.test(text) || ISO_WITH_ZONE.test(text);
  if (iso && Number.isFinite(ms) && ms >= EPOCH_MS_FLOOR) return Math.round(ms);
  ctx.addIssue({
    code: 'custom',
    message: `expected an ISO 8601 time with a zone (2025-06-01T12:00:00Z) or epoch milliseconds, got ${JSON.stringify(v)}`,
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
