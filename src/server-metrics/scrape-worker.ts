/**
 * The server-metrics scraper thread. It runs off the run's event loop, so fetching and parsing a
 * large `/metrics` body never delays a send or a timestamp of the benchmark; each endpoint has its
 * own one-socket keep-alive agent, never the benchmark's pool. It scrapes every endpoint once at
 * start (an endpoint whose first scrape fails is reported and not scraped again), then every
 * `intervalMs` on an absolute schedule (a scrape still in flight is not doubled), once more on
 * `mark` (the start of the profiling phase) and at `stop`, and appends each answer to
 * `server_metrics_export.jsonl` stamped on the main thread's clock (snapshot.ts).
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { parentPort, workerData } from 'node:worker_threads';
import { parsePrometheusText } from './prometheus-text.js';
import { statusReason, transportReason } from './scrape-failure.js';
import type {
  EndpointReport,
  FamilyInfo,
  FromScraper,
  ScrapeEndpoint,
  ScraperInit,
  ScraperThreadData,
  ToScraper,
} from './scrape-protocol.js';
import { formatScrapeLine, snapshotMetrics } from './snapshot.js';

/** A body larger than this is not read (no server's metrics come near it). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Main-thread monotonic ns → epoch ns, as the run's TimeBase maps them. */
interface StampClock {
  nowNs(): number;
  epochNs(monoNs: number): bigint;
}

function stampClock(mainTimeOriginMs: number): StampClock {
  const offsetNs = (performance.timeOrigin - mainTimeOriginMs) * 1e6;
  const anchor = BigInt(Math.round(mainTimeOriginMs * 1e3)) * 1000n;
  return {
    nowNs: () => performance.now() * 1e6 + offsetNs,
    epochNs: (monoNs) => anchor + BigInt(Math.round(monoNs)),
  };
}

/** What one GET of `/metrics` gave: status, content type, body, and when the headers arrived. */
interface Answer {
  status: number;
  type: string;
  body: string;
  firstByteNs: number;
}

/**
 * One GET on `agent` (node:http, not undici: the thread starts in a fraction of the time, and one
 * keep-alive socket is all a scrape needs). Bodies over {@link MAX_BODY_BYTES} are refused.
 * @throws {Error} on a connection error, a timeout or a body too large.
 */
function get(
  url: URL,
  agent: HttpAgent,
  headers: Record<string, string>,
  timeoutMs: number,
  clock: StampClock,
): Promise<Answer> {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', agent, headers, timeout: timeoutMs }, (res) => {
      const firstByteNs = clock.nowNs();
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > MAX_BODY_BYTES) req.destroy(new Error(`answered more than ${MAX_BODY_BYTES} bytes`));
        else chunks.push(chunk);
      });
      res.on('error', reject);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          type: String(res.headers['content-type'] ?? ''),
          body: Buffer.concat(chunks).toString('utf8'),
          firstByteNs,
        }),
      );
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** One endpoint: its connection, its counts, and the scrape in flight if any. */
class EndpointScraper {
  readonly report: EndpointReport;
  private readonly url: URL;
  private readonly agent: HttpAgent;
  private inFlight: Promise<void> | null = null;

  constructor(
    private readonly endpoint: ScrapeEndpoint,
    private readonly ctx: {
      clock: StampClock;
      out: WriteStream;
      timeoutMs: number;
      families: Map<string, FamilyInfo>;
    },
  ) {
    this.url = new URL(endpoint.url);
    this.agent = new (this.url.protocol === 'https:' ? HttpsAgent : HttpAgent)({
      keepAlive: true,
      maxSockets: 1,
    });
    this.report = {
      url: endpoint.url,
      status: 'ok',
      reason: null,
      scrapes: 0,
      failedScrapes: 0,
      lastError: null,
      latencyMsSum: 0,
      latencyMsMax: 0,
    };
  }

  get active(): boolean {
    return this.report.status === 'ok';
  }

  /** Scrapes now unless one is in flight (then waits for it); never throws. */
  scrape(first = false): Promise<void> {
    if (!this.active) return Promise.resolve();
    this.inFlight ??= this.fetchOnce()
      .catch((err: unknown) => this.failed(err, first))
      .finally(() => {
        this.inFlight = null;
      });
    return this.inFlight;
  }

  /** Waits for the scrape in flight, if any. */
  async settle(): Promise<void> {
    await this.inFlight;
  }

  close(): void {
    this.agent.destroy();
  }

  private failed(err: unknown, first: boolean): void {
    const message = transportReason(err);
    if (first) {
      this.report.status = 'unavailable';
      this.report.reason = message;
      return;
    }
    this.report.failedScrapes++;
    this.report.lastError = message;
  }

  private async fetchOnce(): Promise<void> {
    const { clock, timeoutMs } = this.ctx;
    const sentNs = clock.nowNs();
    const headers = { accept: 'text/plain', ...this.endpoint.headers };
    const answer = await get(this.url, this.agent, headers, timeoutMs, clock);
    const { firstByteNs } = answer;
    if (answer.status !== 200)
      throw new Error(statusReason(answer.status, this.endpoint.credentials ?? 'other_host'));
    if (answer.type.includes('json')) throw new Error(`answered ${answer.type}, not Prometheus text`);
    const endNs = clock.nowNs();
    let families: ReturnType<typeof parsePrometheusText>;
    try {
      families = parsePrometheusText(answer.body);
    } catch (err) {
      throw new Error(`is not Prometheus text (${(err as Error).message})`);
    }
    for (const f of families.values()) this.ctx.families.set(f.name, { type: f.type, help: f.help });
    this.ctx.out.write(
      formatScrapeLine({
        endpoint_url: this.endpoint.url,
        timestamp_ns: clock.epochNs(firstByteNs),
        endpoint_latency_ns: Math.round(endNs - sentNs),
        metrics: snapshotMetrics(families),
        request_sent_ns: clock.epochNs(sentNs),
        first_byte_ns: clock.epochNs(firstByteNs),
      }),
    );
    const ms = (endNs - sentNs) / 1e6;
    this.report.scrapes++;
    this.report.latencyMsSum += ms;
    this.report.latencyMsMax = Math.max(this.report.latencyMsMax, ms);
  }
}

async function run(
  port: NonNullable<typeof parentPort>,
  init: ScraperInit,
  clock: StampClock,
): Promise<void> {
  const out = createWriteStream(init.file);
  const families = new Map<string, FamilyInfo>();
  const scrapers = init.endpoints.map(
    (e) => new EndpointScraper(e, { clock, out, timeoutMs: init.timeoutMs, families }),
  );
  const reports = (): EndpointReport[] => scrapers.map((s) => ({ ...s.report }));
  const all = async (): Promise<void> => {
    await Promise.all(scrapers.map((s) => s.scrape()));
  };
  await Promise.all(scrapers.map((s) => s.scrape(true)));
  port.postMessage({ type: 'ready', endpoints: reports() } satisfies FromScraper);
  const startNs = clock.nowNs();
  let tick = 0;
  let timer: NodeJS.Timeout | null = null;
  const schedule = (): void => {
    tick++;
    const dueMs = (startNs + tick * init.intervalMs * 1e6 - clock.nowNs()) / 1e6;
    timer = setTimeout(
      () => {
        void all();
        schedule();
      },
      Math.max(0, dueMs),
    );
  };
  if (scrapers.some((s) => s.active)) schedule();
  port.on('message', (message: ToScraper) => {
    if (message.type === 'mark') {
      void all().then(() => port.postMessage({ type: 'marked' } satisfies FromScraper));
      return;
    }
    if (message.type !== 'stop') return;
    if (timer !== null) clearTimeout(timer);
    void (async () => {
      await Promise.all(scrapers.map((s) => s.settle()));
      await all();
      await new Promise<void>((resolve) => out.end(resolve));
      for (const s of scrapers) s.close();
      port.postMessage({
        type: 'done',
        endpoints: reports(),
        families: Object.fromEntries(families),
      } satisfies FromScraper);
      port.close();
    })();
  });
}

if (parentPort !== null) {
  const port = parentPort;
  const clock = stampClock((workerData as ScraperThreadData).mainTimeOriginMs);
  port.once('message', (m: ToScraper) => {
    if (m.type === 'begin') void run(port, m.init, clock);
  });
}
