/**
 * A parser of the Prometheus text exposition format (version 0.0.4, the format vLLM, SGLang and
 * every `prometheus_client` server answer `/metrics` with; spec: prometheus.io "Exposition formats",
 * "Text-based format"). Written here because no npm package parses it correctly and is maintained:
 * the most used one (`parse-prometheus-text-format` 1.1.1, unchanged since 2020) folds every label
 * set of a histogram into one and drops the `_sum`/`_count` of labelled histograms, which is what
 * vLLM's histograms always are (`model_name`, `engine`).
 *
 * What it reads: `# HELP` (with `\\` and `\n` escapes) and `# TYPE` lines, other comments ignored;
 * samples `name{label="value",…} value [timestamp]` with the label-value escapes `\\`, `\"`, `\n`, a
 * trailing comma, spaces or tabs between tokens, a quoted UTF-8 metric name inside the braces
 * (`{"my.metric",a="b"}`), values `NaN`, `+Inf`, `-Inf`; histograms grouped per label set from their
 * `_bucket{le=…}`, `_sum` and `_count` samples. A counter family is named without `_total` (as
 * `prometheus_client`'s own parser names it, and AIPerf's exports); its `_created` time (OpenMetrics,
 * and `prometheus_client`'s `x_created` gauge) is left out. Summaries are skipped (their quantiles
 * cover the server's whole lifetime, AIPerf ignores them too).
 */

/** A family's type: the `# TYPE` line's, `untyped` when there is none. */
export type FamilyType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

/** Label name → value, unescaped. */
export type Labels = Record<string, string>;

/** One series of a counter, gauge or untyped family. */
export interface ScalarSeries {
  labels: Labels;
  value: number;
}

/** One series of a histogram: cumulative bucket counts by upper bound (`le` as written), sum and count. */
export interface HistogramSeries {
  labels: Labels;
  buckets: Record<string, number>;
  sum: number | null;
  count: number | null;
}

/** One metric family of a scrape. */
export interface MetricFamily {
  name: string;
  type: FamilyType;
  /** The `# HELP` text, unescaped; '' when absent. */
  help: string;
  /** Scalar series (counter, gauge, untyped) or histogram series, in order of first appearance. */
  series: ScalarSeries[] | HistogramSeries[];
}

/** A body that is not valid Prometheus text: the 1-based line and what is wrong with it. */
export class PrometheusTextError extends Error {
  override readonly name = 'PrometheusTextError';
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`);
  }
}

// Sticky (`y`): matched at the cursor's position without slicing the line.
const NAME = /[a-zA-Z_:][a-zA-Z0-9_:]*/y;
const LABEL_NAME = /[a-zA-Z_][a-zA-Z0-9_]*/y;
const FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const TYPES: ReadonlySet<string> = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** A sample value as Prometheus writes it (Go `ParseFloat`: `NaN`, `±Inf` in any case). */
function parseValue(text: string): number | null {
  const lower = text.toLowerCase();
  if (lower === 'nan') return Number.NaN;
  if (lower === '+inf' || lower === 'inf') return Number.POSITIVE_INFINITY;
  if (lower === '-inf') return Number.NEGATIVE_INFINITY;
  return FLOAT.test(text) ? Number(text) : null;
}

/** A cursor over one line. */
class Cursor {
  pos = 0;
  constructor(
    readonly text: string,
    readonly lineNo: number,
  ) {}

  fail(message: string): never {
    throw new PrometheusTextError(this.lineNo, message);
  }

  skipBlanks(): void {
    while (this.text[this.pos] === ' ' || this.text[this.pos] === '\t') this.pos++;
  }

  peek(): string | undefined {
    return this.text[this.pos];
  }

  /** Reads what the sticky `re` matches at the cursor, or fails with `what`. */
  take(re: RegExp, what: string): string {
    re.lastIndex = this.pos;
    const m = re.exec(this.text);
    if (m === null) this.fail(`expected ${what} at column ${this.pos + 1}`);
    this.pos += m[0].length;
    return m[0];
  }

  /** A double-quoted string with the `\\`, `\"` and `\n` escapes, the cursor on its opening quote. */
  quoted(): string {
    if (this.text[this.pos] !== '"') this.fail(`expected '"' at column ${this.pos + 1}`);
    const close = this.text.indexOf('"', this.pos + 1);
    const slash = this.text.indexOf('\\', this.pos + 1);
    if (close !== -1 && (slash === -1 || slash > close)) {
      // The usual case, no escape: one slice.
      const out = this.text.slice(this.pos + 1, close);
      this.pos = close + 1;
      return out;
    }
    let out = '';
    for (let i = this.pos + 1; i < this.text.length; i++) {
      const c = this.text[i] as string;
      if (c === '"') {
        this.pos = i + 1;
        return out;
      }
      if (c === '\\') {
        const next = this.text[++i];
        out += next === 'n' ? '\n' : next === '\\' ? '\\' : next === '"' ? '"' : `\\${next ?? ''}`;
      } else out += c;
    }
    return this.fail('unterminated quoted string');
  }

  /** The next whitespace-delimited token ('' at the end of the line). */
  token(): string {
    this.skipBlanks();
    const start = this.pos;
    while (this.pos < this.text.length && this.text[this.pos] !== ' ' && this.text[this.pos] !== '\t')
      this.pos++;
    return this.text.slice(start, this.pos);
  }
}

/** One sample line: its metric name, labels and value. */
interface Sample {
  name: string;
  labels: Labels;
  value: number;
}

/** Reads `{…}` at the cursor: labels, and a quoted metric name as the first item if there is one. */
function readBraces(cur: Cursor, labels: Labels): string | null {
  let name: string | null = null;
  cur.pos++; // '{'
  for (let first = true; ; first = false) {
    cur.skipBlanks();
    if (cur.peek() === '}') break;
    if (first && cur.peek() === '"') {
      name = cur.quoted();
    } else {
      const label = cur.peek() === '"' ? cur.quoted() : cur.take(LABEL_NAME, 'a label name');
      cur.skipBlanks();
      if (cur.peek() !== '=') cur.fail(`expected '=' after label ${label}`);
      cur.pos++;
      cur.skipBlanks();
      if (label in labels) cur.fail(`label ${label} given twice`);
      labels[label] = cur.quoted();
    }
    cur.skipBlanks();
    if (cur.peek() === ',') cur.pos++;
    else if (cur.peek() !== '}') cur.fail(`expected ',' or '}' at column ${cur.pos + 1}`);
  }
  cur.pos++; // '}'
  return name;
}

function parseSample(text: string, lineNo: number): Sample {
  const cur = new Cursor(text, lineNo);
  let name = cur.peek() === '{' ? '' : cur.take(NAME, 'a metric name');
  const labels: Labels = {};
  cur.skipBlanks();
  if (cur.peek() === '{') name = readBraces(cur, labels) ?? name;
  if (name === '') cur.fail('a sample without a metric name');
  const valueText = cur.token();
  const value = parseValue(valueText);
  if (value === null) return cur.fail(`"${valueText}" is not a sample value`);
  const timestamp = cur.token();
  if (timestamp !== '' && !/^-?\d+$/.test(timestamp)) cur.fail(`"${timestamp}" is not a timestamp`);
  if (cur.token() !== '') cur.fail('unexpected text after the sample');
  return { name, labels, value };
}

function unescapeHelp(text: string): string {
  return text.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c === '\\' ? '\\' : `\\${c}`));
}

/** The families being built, by declared name, with their series by label key. */
class Builder {
  readonly families = new Map<string, MetricFamily>();
  private readonly seriesIndex = new Map<string, Map<string, ScalarSeries | HistogramSeries>>();

  family(name: string, type: FamilyType = 'untyped'): MetricFamily {
    let f = this.families.get(name);
    if (f === undefined) {
      f = { name, type, help: '', series: [] };
      this.families.set(name, f);
      this.seriesIndex.set(name, new Map());
    }
    return f;
  }

  /** The family a sample belongs to and the part it gives (`value`, `bucket`, `sum`, `count`). */
  owner(name: string): { family: MetricFamily; part: 'value' | 'bucket' | 'sum' | 'count' } {
    const own = this.families.get(name);
    if (own !== undefined && own.type !== 'histogram' && own.type !== 'summary')
      return { family: own, part: 'value' };
    // `# TYPE x counter` (the family's own name) with samples named `x_total`.
    if (own === undefined && name.endsWith('_total')) {
      const base = this.families.get(name.slice(0, -'_total'.length));
      if (base?.type === 'counter') return { family: base, part: 'value' };
    }
    for (const part of ['bucket', 'sum', 'count'] as const) {
      if (!name.endsWith(`_${part}`)) continue;
      const base = this.families.get(name.slice(0, -part.length - 1));
      if (base?.type === 'histogram' || (base?.type === 'summary' && part !== 'bucket'))
        return { family: base, part };
    }
    return { family: own ?? this.family(name), part: 'value' };
  }

  add(sample: Sample, lineNo: number): void {
    const { family, part } = this.owner(sample.name);
    if (family.type === 'summary') return;
    const labels = { ...sample.labels };
    let le: string | undefined;
    if (part === 'bucket') {
      le = labels.le;
      if (le === undefined) throw new PrometheusTextError(lineNo, `${sample.name} has no le label`);
      delete labels.le;
    }
    const key = labelKey(labels);
    const index = this.seriesIndex.get(family.name) as Map<string, ScalarSeries | HistogramSeries>;
    let series = index.get(key);
    if (series === undefined) {
      series =
        family.type === 'histogram' ? { labels, buckets: {}, sum: null, count: null } : { labels, value: 0 };
      index.set(key, series);
      (family.series as Array<ScalarSeries | HistogramSeries>).push(series);
    }
    if (family.type !== 'histogram') (series as ScalarSeries).value = sample.value;
    else if (part === 'bucket') (series as HistogramSeries).buckets[le as string] = sample.value;
    else if (part === 'sum') (series as HistogramSeries).sum = sample.value;
    else if (part === 'count') (series as HistogramSeries).count = sample.value;
    else
      throw new PrometheusTextError(
        lineNo,
        `${sample.name}: a histogram sample needs _bucket, _sum or _count`,
      );
  }
}

/** A stable key of a label set (sorted names). */
export function labelKey(labels: Labels): string {
  return JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((k) => [k, labels[k]]),
  );
}

function metaLine(b: Builder, text: string, lineNo: number): void {
  const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:[ \t]+(.*))?$/.exec(text);
  if (m === null) return; // a plain comment
  const [, kind, name, rest = ''] = m as unknown as [string, string, string, string | undefined];
  if (kind === 'HELP') {
    b.family(name).help = unescapeHelp(rest);
    return;
  }
  const type = rest.trim();
  if (!TYPES.has(type)) throw new PrometheusTextError(lineNo, `unknown metric type "${type}" for ${name}`);
  const f = b.family(name, type as FamilyType);
  if (f.series.length > 0 && f.type !== type)
    throw new PrometheusTextError(lineNo, `# TYPE ${name} comes after its samples`);
  f.type = type as FamilyType;
}

/** Counter families lose a trailing `_total` (`vllm:prompt_tokens_total` → `vllm:prompt_tokens`). */
function familyName(f: MetricFamily): string {
  return f.type === 'counter' && f.name.endsWith('_total') ? f.name.slice(0, -'_total'.length) : f.name;
}

/**
 * Whether `name` is the creation time of a counter, histogram or summary (`x_created`): OpenMetrics
 * writes it as a sample of the family `x`, `prometheus_client`'s text format as a gauge family of its
 * own next to `x_total`. It is a Unix time, not a value of the family: it is left out.
 */
function isCreatedStamp(b: Builder, name: string): boolean {
  if (!name.endsWith('_created')) return false;
  const base = name.slice(0, -'_created'.length);
  const own = b.families.get(base)?.type;
  return (
    own === 'counter' ||
    own === 'histogram' ||
    own === 'summary' ||
    b.families.get(`${base}_total`)?.type === 'counter'
  );
}

/**
 * Parses one `/metrics` body.
 * @returns the families by name (counters without `_total`), summaries and `_created` times left
 *   out, in order of first appearance.
 * @throws {PrometheusTextError} naming the line of a malformed sample, label or `# TYPE` line.
 */
export function parsePrometheusText(body: string): Map<string, MetricFamily> {
  const b = new Builder();
  const lines = body.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const text = (lines[i] as string).replace(/\r$/, '').trim();
    if (text === '') continue;
    if (text.startsWith('#')) metaLine(b, text, i + 1);
    else b.add(parseSample(text, i + 1), i + 1);
  }
  const out = new Map<string, MetricFamily>();
  for (const f of b.families.values()) {
    if (f.type === 'summary' || f.series.length === 0 || isCreatedStamp(b, f.name)) continue;
    const name = familyName(f);
    out.set(name, { ...f, name });
  }
  return out;
}
