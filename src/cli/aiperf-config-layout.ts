/**
 * AIPerf's sectioned config files read as tokenload's flat keys (`-f`/`--config`). Two layouts:
 *
 * - the `schemaVersion: "2.0"` file of AIPerf's yaml-config tutorial: an envelope (`random_seed`,
 *   `sweep`, `multi_run`) around a `benchmark:` body (`model`/`models`, `endpoint`, `dataset`/
 *   `datasets`, `tokenizer`, `phases`, `artifacts`); a `phases` entry of kind `warmup` gives the
 *   warmup's requests or duration, the one profiling phase the load (`type` concurrency, constant,
 *   poisson, gamma or fixed_schedule, with `concurrency`, `rate`, `requests`, `duration`,
 *   `grace_period`, `smoothness`); a one-parameter `grid` sweep of `concurrency` or `rate` is
 *   tokenload's sweep;
 * - the older sections (`endpoint`, `input`, `loadgen`, `output`, `tokenizer`, `workers`), AIPerf's
 *   config field names, through config/aiperf-layout.ts.
 *
 * Every key is either mapped or listed with its path (and why, where there is one reason), so a file
 * is never run as something else than it says: the caller refuses a file with any unmapped key.
 * Both snake_case and camelCase keys are read (AIPerf takes both).
 */
import { AIPERF_CONFIG_PATHS } from '../config/aiperf-layout.js';
import type { OptionField } from '../util/option-meta.js';

/** The flat keys (tokenload flags, without dashes) a file gave, and the paths it could not map. */
export interface LayoutReading {
  flat: Record<string, unknown>;
  /** `path (why)` or `path`, in file order. */
  unmapped: string[];
}

type Section = Record<string, unknown>;

const isSection = (v: unknown): v is Section => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `maxTokens` → `max_tokens`: AIPerf takes both spellings; the tables below are snake_case. */
const snake = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** A reading in progress: the flat keys so far and the unmapped paths. */
class Reader {
  readonly flat: Record<string, unknown> = {};
  readonly unmapped: string[] = [];

  set(flag: string, value: unknown): void {
    this.flat[flag] = value;
  }

  miss(path: string, why?: string): void {
    this.unmapped.push(why === undefined ? path : `${path} (${why})`);
  }

  /** Reads `section`'s keys through `table` (snake key → flag, or a reader of that key's value). */
  table(
    section: unknown,
    path: string,
    table: Readonly<Record<string, string | ((v: unknown, p: string) => void)>>,
  ): void {
    if (!isSection(section)) {
      this.miss(path, 'expected a section');
      return;
    }
    for (const [key, value] of Object.entries(section)) {
      const entry = table[snake(key)];
      const at = `${path}.${key}`;
      if (entry === undefined) this.miss(at);
      else if (typeof entry === 'string') this.set(entry, value);
      else entry(value, at);
    }
  }
}

/** `120`, `"120s"`, `"5m"`, `"2h"` as seconds; the text as it is when it is none of those. */
function seconds(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const m = /^(\d+(?:\.\d+)?)\s*(s|m|h)?$/.exec(value.trim());
  if (m === null) return value;
  return Number(m[1]) * ({ s: 1, m: 60, h: 3600 }[(m[2] ?? 's') as 's' | 'm' | 'h'] ?? 1);
}

/** `prompts.isl` / `prompts.osl`: a number (the mean) or `{mean, stddev, block_size}`. */
function lengths(r: Reader, value: unknown, path: string, which: 'isl' | 'osl'): void {
  if (!isSection(value)) {
    r.set(which, value);
    return;
  }
  r.table(value, path, {
    mean: which,
    stddev: `${which}-stddev`,
    ...(which === 'isl' ? { block_size: 'isl-block-size' } : {}),
  });
}

function dataset(r: Reader, value: unknown, path: string): void {
  const d = Array.isArray(value) ? (value.length === 1 ? value[0] : undefined) : value;
  if (d === undefined) {
    r.miss(path, 'tokenload takes one dataset');
    return;
  }
  r.table(d, Array.isArray(value) ? `${path}.0` : path, {
    name: () => undefined,
    type: (v, p) => (v === 'synthetic' || v === 'file' ? undefined : r.miss(p, `dataset type ${String(v)}`)),
    entries: 'num-dataset-entries',
    path: 'input-file',
    format: 'custom-dataset-type',
    prompts: (v, p) =>
      r.table(v, p, {
        isl: (x, q) => lengths(r, x, q, 'isl'),
        osl: (x, q) => lengths(r, x, q, 'osl'),
      }),
    random_seed: 'random-seed',
  });
}

const ARRIVALS = new Set(['constant', 'poisson', 'gamma']);

/** One profiling phase: its load and stop condition. */
function profilingPhase(r: Reader, phase: Section, path: string): void {
  r.table(phase, path, {
    name: () => undefined,
    kind: () => undefined,
    type: (v, p) => {
      if (v === 'fixed_schedule') r.set('fixed-schedule', true);
      else if (typeof v === 'string' && ARRIVALS.has(v)) r.set('arrival-pattern', v);
      else if (v !== 'concurrency') r.miss(p, `phase type ${String(v)}`);
    },
    concurrency: 'concurrency',
    rate: 'request-rate',
    requests: 'request-count',
    duration: (v) => r.set('benchmark-duration', seconds(v)),
    grace_period: (v) => r.set('benchmark-grace-period', seconds(v)),
    smoothness: 'arrival-smoothness',
  });
}

/** A warmup phase: tokenload warms up at the profiling load, for a number of requests or a time. */
function warmupPhase(r: Reader, phase: Section, path: string): void {
  r.table(phase, path, {
    name: () => undefined,
    kind: () => undefined,
    type: () => undefined,
    requests: 'warmup-request-count',
    duration: (v) => r.set('warmup-duration', seconds(v)),
    concurrency: (_v, p) => r.miss(p, 'tokenload warms up at the profiling phase’s load'),
    rate: (_v, p) => r.miss(p, 'tokenload warms up at the profiling phase’s load'),
  });
}

function phases(r: Reader, value: unknown, path: string): void {
  const list = Array.isArray(value) ? value : [value];
  let profiling = 0;
  for (const [i, phase] of list.entries()) {
    const at = Array.isArray(value) ? `${path}.${i}` : path;
    if (!isSection(phase)) {
      r.miss(at, 'expected a phase');
      continue;
    }
    const kind = phase.kind ?? (phase.name === 'warmup' ? 'warmup' : 'profiling');
    if (kind === 'warmup') warmupPhase(r, phase, at);
    else if (++profiling > 1) r.miss(at, 'tokenload runs one profiling phase');
    else profilingPhase(r, phase, at);
  }
}

function endpoint(r: Reader, value: unknown, path: string): void {
  r.table(value, path, {
    url: 'url',
    urls: 'url',
    type: 'endpoint-type',
    streaming: 'streaming',
    api_key: 'api-key',
    timeout: (v) => r.set('request-timeout-seconds', seconds(v)),
    path: 'endpoint',
    custom_endpoint: 'endpoint',
  });
}

function benchmark(r: Reader, value: unknown): void {
  r.table(value, 'benchmark', {
    model: 'model',
    models: 'model',
    endpoint: (v, p) => endpoint(r, v, p),
    dataset: (v, p) => dataset(r, v, p),
    datasets: (v, p) => dataset(r, v, p),
    tokenizer: (v, p) =>
      isSection(v)
        ? r.table(v, p, { name: 'tokenizer', revision: 'tokenizer-revision' })
        : r.set('tokenizer', v),
    phases: (v, p) => phases(r, v, p),
    artifacts: (v, p) => r.table(v, p, { dir: 'artifact-dir' }),
  });
}

/** A `grid` sweep of one parameter, `concurrency` or `rate` (bare, or under `phases.profiling.`). */
function sweep(r: Reader, value: unknown): void {
  r.table(value, 'sweep', {
    type: (v, p) =>
      v === 'grid' ? undefined : r.miss(p, `tokenload sweeps a grid of one parameter, not ${String(v)}`),
    parameters: (v, p) => {
      if (!isSection(v)) {
        r.miss(p, 'expected a section');
        return;
      }
      const entries = Object.entries(v);
      for (const [key, values] of entries) {
        const name = key.replace(/^phases\.profiling\./, '');
        if (entries.length === 1 && name === 'concurrency') r.set('concurrency', values);
        else if (entries.length === 1 && name === 'rate') r.set('request-rate', values);
        else r.miss(`${p}.${key}`, 'tokenload sweeps one of concurrency or rate');
      }
    },
  });
}

/** The `schemaVersion: "2.0"` layout. */
function readV2(data: Section): LayoutReading {
  const r = new Reader();
  r.table(data, '', {
    schema_version: (v, p) =>
      String(v).startsWith('2') ? undefined : r.miss(p.slice(1), `schema ${String(v)}`),
    random_seed: 'random-seed',
    benchmark: (v) => benchmark(r, v),
    sweep: (v) => sweep(r, v),
    multi_run: (v, p) =>
      r.table(v, p.slice(1), {
        num_runs: 'num-profile-runs',
        cooldown_seconds: 'profile-run-cooldown-seconds',
        confidence_level: 'confidence-level',
        set_consistent_seed: 'set-consistent-seed',
        disable_warmup_after_first: 'profile-run-disable-warmup-after-first',
      }),
  });
  return { flat: r.flat, unmapped: r.unmapped.map((u) => u.replace(/^\./, '')) };
}

/** The older sections, by AIPerf's config field paths (config/aiperf-layout.ts), `endpoint.url` too. */
function readSections(data: Section, fields: readonly OptionField[]): LayoutReading {
  const flagOfPath = new Map<string, string>([['endpoint.url', 'url']]);
  for (const [ours, theirs] of AIPERF_CONFIG_PATHS) {
    const field = fields.find((f) => f.path.join('.') === ours && f.meta.internal !== true);
    if (field !== undefined) flagOfPath.set(theirs, field.meta.flag);
  }
  const r = new Reader();
  const walk = (value: unknown, path: string): void => {
    const flag = flagOfPath.get(path);
    if (flag !== undefined) r.set(flag, value);
    else if (!isSection(value)) r.miss(path);
    else
      for (const [key, v] of Object.entries(value))
        walk(v, path === '' ? snake(key) : `${path}.${snake(key)}`);
  };
  walk(data, '');
  return { flat: r.flat, unmapped: r.unmapped };
}

/**
 * `data`, a file in one of AIPerf's layouts, as tokenload's flat keys, with every path it could not
 * map. `fields` are the command's option fields.
 */
export function readAiperfLayout(data: Section, fields: readonly OptionField[]): LayoutReading {
  const v2 = 'schemaVersion' in data || 'schema_version' in data || 'benchmark' in data;
  return v2 ? readV2(data) : readSections(data, fields);
}
