import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderConsole } from '../../src/export/console-table.js';
import { renderSummaryCsv } from '../../src/export/summary-csv.js';
import { buildSummaryJson } from '../../src/export/summary-json.js';
import { ResponseChecks } from '../../src/metrics/response-checks.js';
import type { StatsSummary, Summary } from '../../src/metrics/summary.js';
import { emptyTotals } from '../../src/metrics/totals.js';
import { REDACTED, redactConfig } from '../../src/util/redact.js';

/**
 * Hand-built summary. TTFT from the two values [10, 15] ms: avg 12.5, p_q = 10 + 5·q/100
 * (p1 10.05 … p99 14.95), population std 2.5. ISL from [100, 200]: p_q = 100 + q, std 50.
 */
function tinySummary(): Summary {
  return {
    metrics: {
      time_to_first_token: {
        unit: 'ms',
        avg: 12.5,
        min: 10,
        max: 15,
        p1: 10.05,
        p5: 10.25,
        p10: 10.5,
        p25: 11.25,
        p50: 12.5,
        p75: 13.75,
        p90: 14.5,
        p95: 14.75,
        p99: 14.95,
        std: 2.5,
        count: 2,
      },
      input_sequence_length: {
        unit: 'tokens',
        avg: 150,
        min: 100,
        max: 200,
        p1: 101,
        p5: 105,
        p10: 110,
        p25: 125,
        p50: 150,
        p75: 175,
        p90: 190,
        p95: 195,
        p99: 199,
        std: 50,
        count: 2,
      },
      error_isl: {
        unit: 'tokens',
        avg: 7,
        min: 7,
        max: 7,
        p1: 7,
        p5: 7,
        p10: 7,
        p25: 7,
        p50: 7,
        p75: 7,
        p90: 7,
        p95: 7,
        p99: 7,
        std: 0,
        count: 1,
      },
      request_count: { unit: 'requests', avg: 2 },
      benchmark_duration: { unit: 'sec', avg: 1.5 },
      output_token_throughput: { unit: 'tokens/sec', avg: 1234.5 },
    },
    errorSummary: [{ code: 429, type: 'Too Many Requests', message: 'rate limited, retry', count: 3 }],
    warnings: [],
    totals: emptyTotals(false),
    usageCheck: null,
    cacheCheck: null,
    responses: new ResponseChecks().section(),
  };
}

test('CSV: AIPerf two-section layout plus the error section, exact text', () => {
  const expected = [
    'Metric,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,p99,std',
    'Input Sequence Length (tokens),150,100,200,101,105,110,125,150,175,190,195,199,50',
    'Time to First Token (ms),12.50,10,15,10.05,10.25,10.50,11.25,12.50,13.75,14.50,14.75,14.95,2.50',
    '',
    'Metric,Value',
    'Benchmark Duration (sec),1.50',
    'Output Token Throughput (tokens/sec),1234.50',
    'Request Count,2',
    '',
    'Error Code,Error Type,Error Message,Count',
    '429,Too Many Requests,"rate limited, retry",3',
    '',
  ].join('\n');
  assert.equal(renderSummaryCsv(tinySummary()), expected);
});

test('summary JSON: run keys, one key per metric tag, stats and scalar shapes', () => {
  const json = buildSummaryJson({
    summary: tinySummary(),
    inputConfig: { model: 'm', api_key: 'sk-secret' },
    aiperfInputConfig: { endpoint: { model_names: ['m'], api_key: 'sk-secret' } },
    startTime: new Date('2025-01-02T03:04:05.000Z'),
    endTime: new Date('2025-01-02T03:04:06.500Z'),
    wasCancelled: false,
    version: '9.9.9',
  });
  assert.equal(json.schema_version, '1.5');
  assert.equal(json.tokenload_version, '9.9.9');
  assert.equal(json.aiperf_version, 'tokenload-9.9.9');
  assert.match(json.benchmark_id, /^[0-9a-f-]{36}$/);
  assert.equal(json.run_info.benchmark_id, json.benchmark_id);
  assert.equal(json.run_info.run_label, 'run_0001');
  assert.equal(json.start_time, '2025-01-02T03:04:05.000Z');
  assert.equal(json.end_time, '2025-01-02T03:04:06.500Z');
  assert.equal(json.was_cancelled, false);
  assert.deepEqual(json.tokenload_config, { model: 'm', api_key: REDACTED });
  assert.deepEqual(json.input_config, { endpoint: { model_names: ['m'], api_key: REDACTED } });
  assert.deepEqual(json.error_summary, [
    { code: 429, type: 'Too Many Requests', message: 'rate limited, retry', count: 3 },
  ]);
  assert.deepEqual(json.warnings, []);
  assert.deepEqual(Object.keys(json.time_to_first_token as object), [
    'unit',
    'avg',
    'min',
    'max',
    'p1',
    'p5',
    'p10',
    'p25',
    'p50',
    'p75',
    'p90',
    'p95',
    'p99',
    'std',
    'count',
  ]);
  assert.deepEqual(json.request_count, { unit: 'requests', avg: 2 });
});

test('redaction: secret keys, auth headers in objects and -H strings, bearer strings', () => {
  const config = {
    api_key: 'sk-1',
    tokenizer: 'builtin:qwen3',
    max_tokens: 5,
    extra_inputs: { ignore_eos: true },
    headers: ['Authorization: Bearer abc', 'X-Trace: on', 'x-api-key=k'],
    nested: { password: 'p', header_map: { Cookie: 'c', Accept: 'json' }, note: 'Bearer zzz' },
  };
  assert.deepEqual(redactConfig(config), {
    api_key: REDACTED,
    tokenizer: 'builtin:qwen3',
    max_tokens: 5,
    extra_inputs: { ignore_eos: true },
    headers: [`Authorization:${REDACTED}`, 'X-Trace: on', `x-api-key=${REDACTED}`],
    nested: { password: REDACTED, header_map: { Cookie: REDACTED, Accept: 'json' }, note: REDACTED },
  });
  assert.equal(config.api_key, 'sk-1'); // input untouched
});

test('console: title, column order, scalar rows in avg, hidden metrics, error table, footer', () => {
  const text = renderConsole({ summary: tinySummary(), artifacts: { csv: 'out/a.csv', json: 'out/a.json' } });
  const lines = text.split('\n');
  assert.equal(lines[0], 'tokenload | LLM Metrics');
  assert.match(text, /│ Metric +│ +avg │ +min │ +max │ +p99 │ +p90 │ +p50 │ +std │/);
  assert.match(
    text,
    /│ Time to First Token \(ms\) +│ +12\.50 │ +10\.00 │ +15\.00 │ +14\.95 │ +14\.50 │ +12\.50 │ +2\.50 │/,
  );
  assert.match(text, /│ Output Token Throughput \(tokens\/sec\) │ +1,234\.50 │ +N\/A │/);
  assert.match(text, /│ Request Count +│ +2\.00 │ +N\/A │/);
  assert.equal(text.includes('Error Input Sequence Length'), false); // error-only metric hidden
  // display order: TTFT (100) before ISL (700) before output throughput (800)
  assert.ok(text.indexOf('Time to First Token') < text.indexOf('Input Sequence Length'));
  assert.ok(text.indexOf('Input Sequence Length') < text.indexOf('Output Token Throughput'));
  assert.match(text, /tokenload \| Error Summary/);
  assert.match(text, /│ 429 +│ Too Many Requests │ rate limited, retry │ 3 +│/);
  assert.match(text, /Benchmark Duration: 1\.50 sec\nCSV Export: out\/a\.csv\nJSON Export: out\/a\.json\n$/);
});

test('console: the from-schedule rows and their line only when p50 or p99 is > 10 % and > 1 ms above the usual', () => {
  const base = tinySummary();
  const ttft = base.metrics.time_to_first_token as StatsSummary;
  /** TTFT's statistics moved up by `ms` (every percentile and the mean), as another metric. */
  const shifted = (ms: number): StatsSummary => {
    const out = { ...ttft };
    for (const key of [
      'avg',
      'min',
      'max',
      'p1',
      'p5',
      'p10',
      'p25',
      'p50',
      'p75',
      'p90',
      'p95',
      'p99',
    ] as const)
      out[key] = ttft[key] + ms;
    return out;
  };
  const render = (fromScheduleUpMs: number, waits: Record<string, StatsSummary>, concurrency?: number) =>
    renderConsole({
      summary: {
        ...base,
        metrics: { ...base.metrics, time_to_first_token_from_schedule: shifted(fromScheduleUpMs), ...waits },
      },
      ...(concurrency === undefined ? {} : { inputConfig: { concurrency } }),
    });
  // TTFT p50 12.5, p99 14.95: 1.2 ms up is under 10 % of both; 1.3 ms is over 10 % of p50 and over 1 ms
  const lag = { client_lag: shifted(-9.5), concurrency_wait: shifted(-12) };
  const quiet = render(1.2, lag);
  assert.equal(quiet.includes('from Schedule'), false);
  assert.equal(quiet.includes('Latency from the schedule'), false);
  const late = render(1.3, lag);
  assert.match(late, /│ Time to First Token from Schedule +│ +13\.80 │/);
  assert.ok(late.indexOf('Time to First Token (ms)') < late.indexOf('Time to First Token from Schedule'));
  assert.match(
    late,
    /\n└[─┴]+┘\nLatency from the schedule is higher: the client sent late \(client_lag p99 5\.45 ms\)\n/,
  );
  const queued = render(30, { client_lag: shifted(-9.5), concurrency_wait: shifted(10) }, 4);
  assert.match(
    queued,
    /\nLatency from the schedule is higher: the concurrency cap \(4\) queued requests \(concurrency_wait p99 24\.95 ms\)\n/,
  );
});
