/**
 * The run's side of server-metrics scraping: starts the scraper thread (scrape-worker.ts) early,
 * tells it what to scrape once the target answers, waits for its first scrape of every endpoint, warns once for each endpoint that did not answer with
 * Prometheus text (the run goes on without it: a server without `/metrics` is not an error), and
 * stops it after the run. A scraper thread that fails is warned about once and ignored: it never
 * stops the benchmark.
 */
import { Worker } from 'node:worker_threads';
import { monotonicNowNs, TimeBase } from '../timing/clock.js';
import { workerSource } from '../util/worker-source.js';
import type {
  EndpointReport,
  FamilyInfo,
  FromScraper,
  ScrapeEndpoint,
  ScraperInit,
  ScraperThreadData,
  ToScraper,
} from './scrape-protocol.js';

/** Per-scrape time limit, ms (AIPerf's reachability timeout). */
export const SCRAPE_TIMEOUT_MS = 10_000;

/** The longest the start of the profiling phase waits for its scrape, ms. */
const MARK_WAIT_MS = 2_000;

/** What the scraper gathered: the JSONL file's path and what it knows about each endpoint. */
export interface ScrapeReport {
  /** The JSONL file of the scrapes: `server_metrics_export.jsonl` (`gpu_telemetry_export.jsonl`). */
  file: string;
  intervalMs: number;
  endpoints: EndpointReport[];
  /** Type and help of every family seen, by name (counters without `_total`). */
  families: Record<string, FamilyInfo>;
  /** When the profiling phase's scrape was asked for and when the scraper was stopped, epoch ns. */
  markNs: bigint | null;
  stopNs: bigint;
  /** Why the scraper thread stopped early; null when it ran to the end. */
  failure: string | null;
}

/** A running scraper. */
export interface ServerMetricsScraper {
  /** Scrapes every endpoint now (the start of the profiling phase); waits at most 2 s. */
  mark(): Promise<void>;
  /** Scrapes once more, closes the file and ends the thread. */
  stop(): Promise<ScrapeReport>;
}

/** What to scrape ({@link ScraperThread.begin}). */
export interface ScraperOptions {
  endpoints: ScrapeEndpoint[];
  intervalMs: number;
  file: string;
}

/**
 * The scraper thread, started before the run knows its target so that its start-up overlaps the
 * run's own (tokenizer, simulator, client warm-up).
 */
export interface ScraperThread {
  /**
   * Starts scraping; resolves after the first scrape of every endpoint (each one that failed is
   * warned about once). Never rejects.
   */
  begin(opts: ScraperOptions): Promise<ServerMetricsScraper>;
  /** Ends the thread at once (a run that failed, or that never began scraping). */
  close(): Promise<void>;
}

/** One waiter per expected message type. */
class Replies {
  private readonly waiting = new Map<string, Array<(m: FromScraper | null) => void>>();

  next<T extends FromScraper['type']>(type: T): Promise<Extract<FromScraper, { type: T }> | null> {
    return new Promise((resolve) => {
      const list = this.waiting.get(type) ?? [];
      list.push(resolve as (m: FromScraper | null) => void);
      this.waiting.set(type, list);
    });
  }

  deliver(message: FromScraper): void {
    const first = this.waiting.get(message.type)?.shift();
    first?.(message);
  }

  /** Every waiter gets null (the thread is gone). */
  fail(): void {
    for (const list of this.waiting.values()) for (const resolve of list.splice(0)) resolve(null);
  }
}

/** How a scraper names itself in warnings: `server metrics`, and how to turn it off. */
export interface ScraperNames {
  /** What is scraped, first in each warning (`server metrics`, `GPU telemetry`). */
  label: string;
  /** How to turn it off, in parentheses after a warning (`--no-server-metrics skips scraping`). */
  optOut: string;
}

const SERVER_METRICS_NAMES: ScraperNames = {
  label: 'server metrics',
  optOut: '--no-server-metrics skips scraping',
};

function warnUnavailable(
  endpoints: readonly EndpointReport[],
  asked: readonly ScrapeEndpoint[],
  names: ScraperNames,
  log: Logger,
): void {
  const optional = new Set(asked.filter((e) => e.optional === true).map((e) => e.url));
  for (const e of endpoints) {
    if (e.status !== 'unavailable' || optional.has(e.url)) continue;
    log.warn(`${names.label}: ${e.url} ${e.reason}; the run goes on without its metrics (${names.optOut})`);
  }
}

/** Endpoint reports before any scrape answered. */
const unscraped = (endpoints: readonly ScrapeEndpoint[]): EndpointReport[] =>
  endpoints.map((e) => ({
    url: e.url,
    status: 'unavailable',
    reason: 'not scraped',
    scrapes: 0,
    failedScrapes: 0,
    lastError: null,
    latencyMsSum: 0,
    latencyMsMax: 0,
  }));

type Logger = { warn(message: string): void };

/** The thread, its replies, and whether it failed or ended. */
class ThreadState {
  readonly replies = new Replies();
  failure: string | null = null;
  /** Set once the thread said `done` or was closed: its exit is then expected. */
  ended = false;

  constructor(
    readonly worker: Worker,
    private readonly log: Logger,
    private readonly names: ScraperNames,
  ) {
    worker.on('message', (m: FromScraper) => {
      if (m.type === 'done') this.ended = true;
      this.replies.deliver(m);
    });
    worker.on('error', (err) => this.fail(err.message));
    worker.on('exit', (code) => this.fail(`its thread exited with code ${code}`));
  }

  fail(message: string): void {
    if (this.failure !== null || this.ended) return;
    this.failure = message;
    this.log.warn(
      `${this.names.label}: the scraper stopped (${message}); the run goes on without ${this.names.label}`,
    );
    this.replies.fail();
  }

  send(m: ToScraper): void {
    if (this.failure === null) this.worker.postMessage(m);
  }

  async end(): Promise<void> {
    this.ended = true;
    this.replies.fail();
    await this.worker.terminate();
  }
}

/** Waits for `reply`, at most `ms`. */
async function within(reply: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([reply, bound]);
  clearTimeout(timer);
}

function scraperOf(state: ThreadState, opts: ScraperOptions, first: EndpointReport[]): ServerMetricsScraper {
  const time = new TimeBase();
  let endpoints = first;
  let markNs: bigint | null = null;
  return {
    async mark() {
      markNs = time.toEpochNs(monotonicNowNs());
      const marked = state.replies.next('marked');
      state.send({ type: 'mark' });
      await within(marked, MARK_WAIT_MS);
    },
    async stop() {
      const stopNs = time.toEpochNs(monotonicNowNs());
      const done = state.replies.next('done');
      state.send({ type: 'stop' });
      const last = state.failure === null ? await done : null;
      if (last !== null) endpoints = last.endpoints;
      await state.end();
      const families = last?.families ?? {};
      return {
        file: opts.file,
        intervalMs: opts.intervalMs,
        endpoints,
        families,
        markNs,
        stopNs,
        failure: state.failure,
      };
    },
  };
}

/**
 * Starts the scraper thread (it waits for {@link ScraperThread.begin}); `names` words its warnings
 * (server metrics by default; the GPU telemetry scraper is another thread of the same kind).
 */
export function spawnServerMetrics(log: Logger, names: ScraperNames = SERVER_METRICS_NAMES): ScraperThread {
  const entry = workerSource(import.meta.url, 'scrape-worker');
  const data: ScraperThreadData = { mainTimeOriginMs: performance.timeOrigin };
  const worker = new Worker(entry.source, { eval: entry.eval, workerData: data });
  const state = new ThreadState(worker, log, names);
  return {
    async begin(opts) {
      const ready = state.replies.next('ready');
      const init: ScraperInit = { ...opts, timeoutMs: SCRAPE_TIMEOUT_MS };
      state.send({ type: 'begin', init });
      const reply = state.failure === null ? await ready : null;
      const endpoints = reply?.endpoints ?? unscraped(opts.endpoints);
      if (reply !== null) warnUnavailable(endpoints, opts.endpoints, names, log);
      return scraperOf(state, opts, endpoints);
    },
    close: () => state.end(),
  };
}
