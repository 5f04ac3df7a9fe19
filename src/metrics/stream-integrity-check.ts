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

/** The kinds a warning counts, as {@link StreamIntegritySummary} names them. */
export type IntegrityKind =
  | 'buffered'
  | 'cumulative'
  | 'usage_untrusted'
  | 'malformed_event'
  | 'event_too_large';

const KINDS: readonly IntegrityKind[] = [
  'buffered',
  'cumulative',
  'usage_untrusted',
  'malformed_event',
  'event_too_large',
];

/**
 * Where the requests of each kind came from, for a run with several servers: how many servers
 * answered any request (by the records' `serverUrl`), and per kind each server's count (only servers
 * with one or more, first seen first).
 */
export interface IntegritySources {
  /** Servers that answered (or failed) one or more of the requests checked. */
  servers: number;
  /** Per kind, `[server URL, requests]` of every server with one or more. */
  byKind: Record<IntegrityKind, Array<[string, number]>>;
}

/** The sources of a run with one server, or records without a `serverUrl`: nothing to name. */
const ONE_SOURCE: IntegritySources = {
  servers: 1,
  byKind: { buffered: [], cumulative: [], usage_untrusted: [], malformed_event: [], event_too_large: [] },
};

/** Which kinds one record counts in (a failed request at most one of the unreadable ones). */
function kindsOf(record: LineRecord): IntegrityKind[] {
  const out: IntegrityKind[] = [];
  const kind = record.raw.error?.kind;
  if (kind === 'malformed_event' || kind === 'event_too_large') out.push(kind);
  const integrity = record.streamIntegrity;
  if (integrity === undefined) return out;
  if (integrity.buffered !== undefined) out.push('buffered');
  if (integrity.cumulative === true) out.push('cumulative');
  if (integrity.usage_untrusted !== undefined && integrity.usage_untrusted.length > 0)
    out.push('usage_untrusted');
  return out;
}

/** Counts the records' stream integrity as they complete. */
export class StreamIntegrityCheck {
  /** Per server (`serverUrl`), its requests of each kind; a record without a server is not here. */
  private readonly perServer = new Map<string, Record<IntegrityKind, number>>();

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
    this.addSource(record);
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

  private addSource(record: LineRecord): void {
    const url = record.raw.serverUrl;
    if (url === undefined) return;
    let counts = this.perServer.get(url);
    if (counts === undefined) {
      counts = { buffered: 0, cumulative: 0, usage_untrusted: 0, malformed_event: 0, event_too_large: 0 };
      this.perServer.set(url, counts);
    }
    for (const kind of kindsOf(record)) counts[kind]++;
  }

  /** A copy of the counts so far. */
  result(): StreamIntegritySummary {
    return structuredClone(this.s);
  }

  /** Where each kind's requests came from so far ({@link IntegritySources}). */
  sources(): IntegritySources {
    const byKind = structuredClone(ONE_SOURCE.byKind);
    for (const [url, counts] of this.perServer)
      for (const kind of KINDS) if (counts[kind] > 0) byKind[kind].push([url, counts[kind]]);
    return { servers: this.perServer.size, byKind };
  }
}

/**
 * The servers a kind's requests came from, after its count in a warning, when the run had several:
 * ` (all 3 from http://10.0.0.2:8000)` (` (from …)` for one request), ` (2 from A, 1 from B)`, or
 * ` (on all 3 servers)` (` (on both servers)`); empty with one server.
 */
function fromWhere(sources: IntegritySources, kind: IntegrityKind): string {
  const from = sources.byKind[kind];
  if (sources.servers < 2 || from.length === 0) return '';
  if (from.length === sources.servers)
    return sources.servers === 2 ? ' (on both servers)' : ` (on all ${sources.servers} servers)`;
  const only = from[0];
  if (from.length === 1 && only !== undefined)
    return only[1] === 1 ? ` (from ${only[0]})` : ` (all ${only[1]} from ${only[0]})`;
  return ` (${from.map(([url, n]) => `${n} from ${url}`).join(', ')})`;
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

/** The servers of one kind's requests, as {@link fromWhere} words them. */
type Where = (kind: IntegrityKind) => string;

function bufferedWarning(s: StreamIntegritySummary, where: Where): string | null {
  if (s.buffered === 0) return null;
  return (
    `${s.buffered} of ${s.requests} requests${where('buffered')} arrived buffered: at least half of their chunk gaps were 0 and ` +
    `one network read completed up to ${s.largest_burst_chunks} content events, so something between server ` +
    'and client (a proxy, a gateway, a load balancer) held the stream back and released it in bursts, or ' +
    'the client read late (see client_health). Their TTFT, ITL and inter-chunk latency measure that ' +
    'buffering, not generation (an ITL near 0 is no decode speed); check the proxy for response buffering ' +
    '(stream_integrity.buffered in profile_export.jsonl).'
  );
}

function cumulativeWarning(s: StreamIntegritySummary, where: Where): string | null {
  if (s.cumulative === 0) return null;
  return (
    `${s.cumulative} of ${s.requests} requests${where('cumulative')} streamed cumulative text: every chunk repeated the whole text ` +
    'so far instead of a delta. Each chunk was kept as what it added, so the output text (and a multi-turn ' +
    "history) is the last chunk's text; check the server's or gateway's streaming mode " +
    '(stream_integrity.cumulative in profile_export.jsonl).'
  );
}

function usageUntrustedWarning(s: StreamIntegritySummary, where: Where): string | null {
  if (s.usage_untrusted === 0) return null;
  const fields = (Object.keys(FAULT_WORDS) as UsageFault[])
    .filter((f) => s.usage_untrusted_fields[f] > 0)
    .map((f) => `${FAULT_WORDS[f]} (${s.usage_untrusted_fields[f]})`);
  return (
    `${s.usage_untrusted} of ${s.requests} requests${where('usage_untrusted')} carried a usage that contradicts the stream or the request ` +
    `— ${fields.join('; ')} — so it was not used (usage_untrusted): their OSL, reasoning tokens and ISL are ` +
    "the client's own counts (stream_integrity.usage_untrusted in profile_export.jsonl names the fields). A " +
    'gateway or proxy rewriting usage, or a server miscounting, would otherwise put wrong numbers into ' +
    'throughput and TPOT.'
  );
}

function unreadableEventWarnings(s: StreamIntegritySummary, where: Where): string[] {
  const out: string[] = [];
  if (s.malformed_event > 0)
    out.push(
      `${s.malformed_event} of ${s.requests} requests${where('malformed_event')} failed at an SSE data event that is not JSON in a 200 ` +
        'stream (malformed_event): the client no longer knew what the server said, so they end at that event.',
    );
  if (s.event_too_large > 0)
    out.push(
      `${s.event_too_large} of ${s.requests} requests${where('event_too_large')} failed at an SSE event larger than the client's limit of ` +
        `${MAX_EVENT_BYTES / 1024 / 1024} MiB per event (event_too_large): tokenload's cap, not a server error.`,
    );
  return out;
}

/**
 * The warnings of the check: at most one per kind, with counts; empty for clean streams. With
 * `sources` of a run with several servers, each names the servers its requests came from.
 */
export function streamIntegrityWarnings(
  s: StreamIntegritySummary,
  sources: IntegritySources = ONE_SOURCE,
): string[] {
  const where: Where = (kind) => fromWhere(sources, kind);
  const found = [bufferedWarning(s, where), cumulativeWarning(s, where), usageUntrustedWarning(s, where)];
  return [...found.filter((w): w is string => w !== null), ...unreadableEventWarnings(s, where)];
}
