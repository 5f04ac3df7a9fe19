/**
 * Messages between the run (main thread) and the server-metrics scraper thread
 * (scrape-worker.ts), and what the scraper reports when it stops.
 */
import type { FamilyType } from './prometheus-text.js';
import type { ScrapeCredentials } from './scrape-failure.js';

/** One `/metrics` URL to scrape, with the headers to send it. */
export interface ScrapeEndpoint {
  url: string;
  headers: Record<string, string>;
  /** What `headers` carry of the run's credentials, for the reason of a 401 or 403; absent: `other_host`. */
  credentials?: ScrapeCredentials;
  /** A default tried in case it is there (`--gpu-telemetry`'s): no warning when it does not answer. */
  optional?: boolean;
}

/** What the scraper is told to scrape (its first message; the thread starts before the run knows). */
export interface ScraperInit {
  endpoints: ScrapeEndpoint[];
  /** Time between two periodic scrapes, ms. */
  intervalMs: number;
  /** Per-scrape time limit (headers and body), ms. */
  timeoutMs: number;
  /** `server_metrics_export.jsonl`, written by the scraper. */
  file: string;
}

/** Scraper thread start-up data (`workerData`). */
export interface ScraperThreadData {
  /** The main thread's `performance.timeOrigin` (epoch ms), so scrapes are stamped on the run's clock. */
  mainTimeOriginMs: number;
}

/** What one endpoint gave over the run. */
export interface EndpointReport {
  url: string;
  /** `unavailable`: its first scrape failed, so it was not scraped again (`reason` says why). */
  status: 'ok' | 'unavailable';
  reason: string | null;
  /** Scrapes answered and parsed (lines in the JSONL file). */
  scrapes: number;
  /** Scrapes that failed after the first one succeeded (timeout, HTTP error, unparsable body). */
  failedScrapes: number;
  /** The last failure's message; null when none failed. */
  lastError: string | null;
  /** Request sent → body read, summed and max over the answered scrapes, ms. */
  latencyMsSum: number;
  latencyMsMax: number;
}

/** A family's declared type and help text, as the endpoints last served them. */
export interface FamilyInfo {
  type: FamilyType;
  help: string;
}

/** Main thread → scraper. */
export type ToScraper = { type: 'begin'; init: ScraperInit } | { type: 'mark' } | { type: 'stop' };

/** Scraper → main thread. */
export type FromScraper =
  | { type: 'ready'; endpoints: EndpointReport[] }
  | { type: 'marked' }
  | { type: 'done'; endpoints: EndpointReport[]; families: Record<string, FamilyInfo> };
