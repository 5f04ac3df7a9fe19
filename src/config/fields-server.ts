/**
 * The options about the server around the run (AIPerf's flags): waiting for the model to be served
 * before the first request (`--wait-for-model-*`, in the Endpoint group), and scraping its
 * Prometheus `/metrics` while the run goes (`--server-metrics`, in the Output group); plus their
 * cross-field rule.
 */
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { normalizeGpuTelemetryUrl, normalizeMetricsUrl } from '../server-metrics/targets.js';
import { option } from '../util/option-meta.js';

/** `--wait-for-model-mode` values: what "the model is served" means. */
export const WAIT_FOR_MODEL_MODES = ['models', 'inference', 'both'] as const;

/** `--wait-for-model-*`: poll until the model is served before the first measured request. */
export const waitForModelFields = {
  /** `--wait-for-model-timeout`, s: 0 = check once that the server answers, as without it. */
  waitForModelTimeoutSeconds: option(z.number().min(0).default(0), {
    flag: 'wait-for-model-timeout',
    unit: 's',
    help: 'before the first request, poll the server until it serves --model, for at most this long (0 = only check once that it answers)',
  }),
  /** `--wait-for-model-mode`: `models` (listed by /v1/models), `inference` (a 1-token request answers 2xx), `both`. */
  waitForModelMode: option(z.enum(WAIT_FOR_MODEL_MODES).optional(), {
    flag: 'wait-for-model-mode',
    unit: 'mode',
    help: 'models: /v1/models lists every --model (or has no such route); inference: a 1-token request answers 2xx; both',
    defaultText: 'inference',
  }),
  /** `--wait-for-model-interval`, s between two polls. */
  waitForModelIntervalSeconds: option(z.number().positive().optional(), {
    flag: 'wait-for-model-interval',
    unit: 's',
    help: 'time between two polls of --wait-for-model-timeout',
    defaultText: '5',
  }),
};

/** Default `--wait-for-model-mode` (AIPerf's). */
export const DEFAULT_WAIT_FOR_MODEL_MODE = 'inference';
/** Default `--wait-for-model-interval`, s (AIPerf's). */
export const DEFAULT_WAIT_FOR_MODEL_INTERVAL_S = 5;

/** A URL item normalized by `normalize`; its ConfigError is the issue. */
const urlItem = (normalize: (text: string) => string) =>
  z.string().transform((v, ctx) => {
    try {
      return normalize(v);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      ctx.addIssue({ code: 'custom', message: err.message });
      return z.NEVER;
    }
  });

/** One `--server-metrics` URL, normalized ({@link normalizeMetricsUrl}); a bad one is the issue. */
const metricsUrl = urlItem((v) => normalizeMetricsUrl(v));

/** A bad `--server-metrics` (`--gpu-telemetry`) value in words: a bad URL's own problem, else what is expected. */
function unionProblem(issue: z.core.$ZodRawIssue): string {
  const errors = (issue as { errors?: Array<Array<{ code?: string; message?: string }>> }).errors;
  const url = errors?.[1]?.[0];
  return url?.code === 'custom' && url.message !== undefined
    ? url.message
    : 'expected true, false or a list of URLs';
}

/** The formats `--server-metrics-formats` names: AIPerf's (tokenload writes no Parquet). */
export const SERVER_METRICS_FORMATS = ['json', 'csv', 'jsonl', 'parquet'] as const;

/** A `--server-metrics-formats` value. */
export type ServerMetricsFormat = (typeof SERVER_METRICS_FORMATS)[number];

/** The server-metrics files kept without `--server-metrics-formats` (AIPerf keeps json and csv). */
export const DEFAULT_SERVER_METRICS_FORMATS: readonly ServerMetricsFormat[] = ['json', 'csv', 'jsonl'];

/**
 * The items of a comma-separated value appended to the ones of earlier flags (`--server-metrics`
 * URLs, `--server-metrics-formats`): repeated flags and commas both list.
 */
function collectCommaList(text: string, previous: unknown): string[] {
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return [...(Array.isArray(previous) ? (previous as string[]) : []), ...items];
}

/** `--server-metrics`: scrape the server's Prometheus `/metrics` during the run; `--gpu-telemetry`: its GPUs'. */
export const serverMetricsFields = {
  /**
   * `--server-metrics [url…]` (on by default; `--no-server-metrics` off): true scrapes the server's
   * own `/metrics`; a list scrapes these URLs too (AIPerf's flag shape).
   */
  serverMetrics: option(
    z.union([z.boolean(), z.array(metricsUrl).min(1)], { error: unionProblem }).default(true),
    {
      flag: 'server-metrics',
      unit: 'url',
      help: "scrape Prometheus /metrics during the run (the server's own, at its root, plus any URLs given); --no-server-metrics turns it off",
      defaultText: 'on: <server root>/metrics',
      parse: collectCommaList,
      variadic: true,
    },
  ),
  /**
   * `--server-metrics-formats` (AIPerf's): which of `server_metrics_export.json`, `.csv` and
   * `.jsonl` the run keeps; unset, all three (AIPerf keeps `.jsonl` only when asked). `parquet` is
   * refused (rules-server.ts).
   */
  serverMetricsFormats: option(z.array(z.enum(SERVER_METRICS_FORMATS)).min(1).optional(), {
    flag: 'server-metrics-formats',
    unit: 'format',
    help: 'server-metrics files to keep: json, csv, jsonl (repeat the flag or list several)',
    defaultText: 'json, csv and jsonl',
    parse: collectCommaList,
    repeatable: true,
  }),
  /**
   * `--gpu-telemetry [url…]` (AIPerf's flag; off unless given): true scrapes AIPerf's two default DCGM
   * exporters (`localhost:9400` and `:9401`); a list scrapes these URLs too. `dashboard`, `pynvml`,
   * `amdsmi` and a metrics CSV are refused.
   */
  gpuTelemetry: option(
    z
      .union([z.boolean(), z.array(urlItem(normalizeGpuTelemetryUrl)).min(1)], { error: unionProblem })
      .default(false),
    {
      flag: 'gpu-telemetry',
      unit: 'url',
      help: "scrape DCGM exporters' /metrics during the run (GPU utilisation, memory, power, clocks per GPU): localhost:9400 and localhost:9401, plus any URLs given",
      defaultText: 'off',
      parse: collectCommaList,
      variadic: true,
    },
  ),
  /** Time between two DCGM scrapes, ms (AIPerf's 330 ms; library callers and tests set it). */
  gpuTelemetryIntervalMs: option(z.number().int().min(10).default(330), {
    flag: 'gpu-telemetry-interval-ms',
    help: 'time between two scrapes of the DCGM exporters, ms',
    internal: true,
  }),
  /** Time between two scrapes, ms (AIPerf has no flag for it; library callers and tests set it). */
  serverMetricsIntervalMs: option(z.number().int().min(10).default(1000), {
    flag: 'server-metrics-interval-ms',
    help: 'time between two scrapes of /metrics, ms',
    internal: true,
  }),
};
