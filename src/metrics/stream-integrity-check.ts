/**
 * The run's stream integrity: how many requests had a stream or a usage that was not what it seemed
 * (each record's `stream_integrity`, record/stream-integrity.ts), and how many failed at an event the
 * client could not read (`malformed_event`, `event_too_large`), with one warning per kind in the words
 * a user searches for ("buffered", "cumulative", "usage.completion_tokens", …; FORMAT.md §6.4).
 */
import { MAX_EVENT_BYTES } from '../client/sse-decoder.js';
import type { LineRecord, UsageFault } from '../record/types.js';

/** `stream_integrity` of the summary: counts of requests. */
export interface StreamIntegritySummary {
  /** Requests checked (every request of the run, failed ones included). */
  requests: number;
  /** Requests whose stream arrived in bursts (a proxy or gateway buffering it). */
  buffered: number;
  /** Largest number of content events one network read completed, over the buffered requests; 0 when none. */
  largest_burst_chunks: number;
  /** Requests whose stream repeated the whole text so far in every chunk. */
  cumulative: number;
  /** Successful requests whose usage contradicted the stream or the request (not used). */
  usage_untrusted: number;
  /** Of those, how many had each field at fault. */
  usage_untrusted_fields: Record<UsageFault, number>;
  /** Requests failed at a data event that was not JSON. */
  malformed_event: number;
  /** Requests failed at an event over the client's size cap. */
  event_too_large: number;
}

/** Counts the records' stream integrity as they complete. */
export class StreamIntegrityCheck {
  private readonly s: StreamIntegritySummary = {
    requests: 0,
    buffered: 0,
    largest_burst_chunks: 0,
    cumulative: 0,
    usage_untrusted: 0,
    usage_untrusted_fields: { completion_tokens: 0, reasoning_tokens: 0, total_tokens: 0, prompt_tokens: 0 },
    malformed_event: 0,
    event_too_large: 0,
  };

  /** Folds in one record. */
  add(record: LineRecord): void {
    const s = this.s;
    s.requests++;
    const kind = record.raw.error?.kind;
    if (kind === 'malformed_event') s.malformed_event++;
    else if (kind === 'event_too_large') s.event_too_large++;
    const integrity = record.streamIntegrity;
    if (integrity === undefined) return;
    if (integrity.buffered !== undefined) {
      s.buffered++;
      s.largest_burst_chunks = Math.max(s.largest_burst_chunks, integrity.buffered.largest_burst_chunks);
    }
    if (integrity.cumulative === true) s.cumulative++;
    const faults = integrity.usage_untrusted;
    if (faults !== undefined && faults.length > 0) {
      s.usage_untrusted++;
      for (const field of faults) s.usage_untrusted_fields[field]++;
    }
  }

  /** A copy of the counts so far. */
  result(): StreamIntegritySummary {
    return structuredClone(this.s);
  }
}

/** What each usage fault means, for the warning. */
const FAULT_WORDS: Record<UsageFault, string> = {
  completion_tokens:
    'usage.completion_tokens below the content chunks received or above the max_tokens asked for',
  reasoning_tokens:
    'usage.completion_tokens_details.reasoning_tokens above completion_tokens or below the reasoning chunks',
  total_tokens: 'usage.total_tokens not prompt_tokens + completion_tokens',
  prompt_tokens:
    'usage.prompt_tokens below the client count of the prompt sent by more than max(10 %, 8 tokens)',
};

function bufferedWarning(s: StreamIntegritySummary): string | null {
  if (s.buffered === 0) return null;
  return (
    `${s.buffered} of ${s.requests} requests arrived buffered: at least half of their chunk gaps were 0 and ` +
    `one network read completed up to ${s.largest_burst_chunks} content events, so something between server ` +
    'and client (a proxy, a gateway, a load balancer) held the stream back and released it in bursts, or ' +
    'the client read late (see client_health). Their TTFT, ITL and inter-chunk latency measure that ' +
    'buffering, not generation (an ITL near 0 is no decode speed); check the proxy for response buffering ' +
    '(stream_integrity.buffered in profile_export.jsonl).'
  );
}

function cumulativeWarning(s: StreamIntegritySummary): string | null {
  if (s.cumulative === 0) return null;
  return (
    `${s.cumulative} of ${s.requests} requests streamed cumulative text: every chunk repeated the whole text ` +
    'so far instead of a delta. Each chunk was kept as what it added, so the output text (and a multi-turn ' +
    "history) is the last chunk's text; check the server's or gateway's streaming mode " +
    '(stream_integrity.cumulative in profile_export.jsonl).'
  );
}

function usageUntrustedWarning(s: StreamIntegritySummary): string | null {
  if (s.usage_untrusted === 0) return null;
  const fields = (Object.keys(FAULT_WORDS) as UsageFault[])
    .filter((f) => s.usage_untrusted_fields[f] > 0)
    .map((f) => `${FAULT_WORDS[f]} (${s.usage_untrusted_fields[f]})`);
  return (
    `${s.usage_untrusted} of ${s.requests} requests carried a usage that contradicts the stream or the request ` +
    `— ${fields.join('; ')} — so it was not used (usage_untrusted): their OSL, reasoning tokens and ISL are ` +
    "the client's own counts (stream_integrity.usage_untrusted in profile_export.jsonl names the fields). A " +
    'gateway or proxy rewriting usage, or a server miscounting, would otherwise put wrong numbers into ' +
    'throughput and TPOT.'
  );
}

function unreadableEventWarnings(s: StreamIntegritySummary): string[] {
  const out: string[] = [];
  if (s.malformed_event > 0)
    out.push(
      `${s.malformed_event} of ${s.requests} requests failed at an SSE data event that is not JSON in a 200 ` +
        'stream (malformed_event): the client no longer knew what the server said, so they end at that event.',
    );
  if (s.event_too_large > 0)
    out.push(
      `${s.event_too_large} of ${s.requests} requests failed at an SSE event larger than the client's limit of ` +
        `${MAX_EVENT_BYTES / 1024 / 1024} MiB per event (event_too_large): tokenload's cap, not a server error.`,
    );
  return out;
}

/** The warnings of the check: at most one per kind, with counts; empty for clean streams. */
export function streamIntegrityWarnings(s: StreamIntegritySummary): string[] {
  const found = [bufferedWarning(s), cumulativeWarning(s), usageUntrustedWarning(s)];
  return [...found.filter((w): w is string => w !== null), ...unreadableEventWarnings(s)];
}
