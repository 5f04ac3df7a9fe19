/**
 * How `tokenload search` judges a probe from the `profile_export_aiperf.json` it wrote (the judge the
 * search runs on every probe's file): each SLO's value, interval and margin, and the client rule.
 * The summaries are written here as a run writes them (the fields the judge reads).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { slaUnit } from '../../src/search/config.js';
import { judgeProbe } from '../../src/search/judge.js';
import type { Sla } from '../../src/search/types.js';

const TTFT: Sla = { metric_tag: 'time_to_first_token', stat: 'p95', op: 'lt', threshold: 500, source: 't' };
const ITL: Sla = { metric_tag: 'inter_token_latency', stat: 'avg', op: 'lt', threshold: 40, source: 't' };
const ERRORS: Sla = { metric_tag: 'request_error_rate', stat: 'p99', op: 'lt', threshold: 0.05, source: 't' };

/** A run summary: `ttftP95` with its ci95, ITL mean/std over `count`, the counts, client and server verdicts. */
function summary(o: {
  ttftP95?: number;
  itlAvg?: number;
  ok?: number;
  failed?: number;
  client?: { status: string; lagP99?: number };
  ratePerS?: number;
  server?: string;
}): Record<string, unknown> {
  const ok = o.ok ?? 400;
  const ttft = o.ttftP95 ?? 300;
  return {
    time_to_first_token: { unit: 'ms', p95: ttft, ci95: { p95: { low: ttft * 0.9, high: ttft * 1.2 } } },
    inter_token_latency: { unit: 'ms', avg: o.itlAvg ?? 20, std: 10, count: ok },
    request_latency: { unit: 'ms', p99: 50, ci95: { p99: { low: 45, high: 60 } } },
    request_count: { avg: ok },
    error_request_count: { avg: o.failed ?? 0 },
    request_throughput: { avg: o.ratePerS ?? 10 },
    client_health: {
      status: o.client?.status ?? 'ok',
      verdict: '…',
      send_lag_ms: { p99: o.client?.lagP99 ?? 1 },
    },
    server_verdict: { status: o.server ?? 'ok', reason: '…' },
  };
}

const judge = (s: Record<string, unknown>, slas: Sla[] = [TTFT, ITL, ERRORS]) =>
  judgeProbe({ summary: s, slas, attainmentFraction: null }, slaUnit);

test('each SLO: the observed value, its 95 % interval, its margin relative to the threshold', () => {
  const j = judge(summary({ ttftP95: 400, itlAvg: 20, ok: 400, failed: 4 }));
  const [ttft, itl, errors] = j.slas;
  assert.equal(j.status, 'pass');
  assert.deepEqual(ttft?.interval, { low: 360, high: 480 });
  assert.ok(Math.abs((ttft?.margin as number) - 0.2) < 1e-9);
  // The pessimistic end of the interval (480 ms) gives the low margin.
  assert.ok(Math.abs((ttft?.margin_interval?.low as number) - 0.04) < 1e-9);
  // The mean's interval: ±1.96 · 10 / √400.
  assert.ok(Math.abs((itl?.interval?.high as number) - (20 + 0.98)) < 0.001);
  // 4 of 404 failed, with a Wilson interval around it that stays inside [0, 1].
  assert.ok(Math.abs((errors?.observed as number) - 4 / 404) < 1e-12);
  const e = errors?.interval;
  assert.ok(e !== null && e !== undefined && (e.low as number) > 0 && (e.high as number) < 0.03);
});

test('a breach names the first SLO that failed; an overloaded server fails a probe whose SLOs pass', () => {
  const miss = judge(summary({ ttftP95: 700, itlAvg: 60 }));
  assert.equal(miss.status, 'fail');
  assert.deepEqual(miss.first_breach, {
    metric_tag: 'time_to_first_token',
    stat: 'p95',
    op: 'lt',
    threshold: 500,
    observed: 700,
  });
  const overloaded = judge(summary({ server: 'overloaded' }));
  assert.equal(overloaded.status, 'fail');
  assert.equal(overloaded.first_breach?.metric_tag, 'server_verdict');
  assert.ok(overloaded.slas.every((s) => s.passed));
});

test('the client: saturated limits the probe; late limits it only when its lag is large beside both the SLOs and its spacing', () => {
  assert.equal(judge(summary({ client: { status: 'saturated' } })).status, 'client_limited');
  assert.equal(judge(summary({ client: { status: 'busy', lagP99: 50 } })).status, 'pass');
  const E2E: Sla = { metric_tag: 'request_latency', stat: 'p99', op: 'lt', threshold: 80, source: 't' };
  const late = (lagP99: number, ratePerS: number, slas: Sla[]) =>
    judge(summary({ client: { status: 'late', lagP99 }, ratePerS, ttftP95: 10 }), slas);
  // 10 ms late at 1 request/s (1,000 ms apart): no bunching, judged, though 10 ms > a tenth of the 80 ms SLO.
  const sparse = late(10, 1, [E2E]);
  assert.equal(sparse.status, 'pass');
  assert.match(sparse.client_note ?? '', /judged/);
  // 10 ms late at 500 requests/s (2 ms apart), against an 80 ms latency SLO: the load was not delivered.
  const dense = late(10, 500, [E2E]);
  assert.equal(dense.status, 'client_limited');
  assert.equal(dense.first_breach, null);
  // 10 ms late at 500 requests/s, against a 500 ms TTFT SLO: too small to matter.
  assert.equal(late(10, 500, [TTFT]).status, 'pass');
  // A 40 ms ITL SLO is not weighed (a late send does not move the gaps between tokens): only the spacing is.
  assert.equal(late(10, 500, [ITL]).status, 'client_limited');
  assert.equal(late(10, 5, [ITL]).status, 'pass');
  // Late with no request rate and no latency SLO: nothing to weigh it against.
  const bare = { ...summary({ client: { status: 'late', lagP99: 0.5 } }), request_throughput: {} };
  assert.equal(judge(bare, [ERRORS]).status, 'client_limited');
});

test('no success: a fail on request_count', () => {
  const j = judge(summary({ ok: 0, failed: 10 }), [ERRORS]);
  assert.equal(j.status, 'fail');
  assert.equal(j.first_breach?.metric_tag, 'request_error_rate');
});
