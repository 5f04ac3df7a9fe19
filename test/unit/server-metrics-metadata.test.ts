/**
 * `server_metrics_metadata.json` (AIPerf's shape) from scrape lines: a family's type and help from
 * the scrape report, a histogram's bucket bounds in increasing order with `+Inf` last.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { serverMetricsMetadata } from '../../src/server-metrics/exports.js';
import type { ScrapeReport } from '../../src/server-metrics/scraper.js';
import type { ScrapeLine } from '../../src/server-metrics/snapshot.js';

test('each endpoint lists its families with type, help and ordered bucket labels', () => {
  const url = 'http://h:1/metrics';
  const line: ScrapeLine = {
    endpoint_url: url,
    timestamp_ns: 1n,
    endpoint_latency_ns: 1,
    request_sent_ns: 1n,
    first_byte_ns: 1n,
    metrics: {
      'vllm:e2e_request_latency_seconds': [
        { buckets: { '0.5': 1, '1': 2, '+Inf': 3, '2.5': 3, '10': 3 }, sum: 1, count: 3 },
      ],
      'vllm:num_requests_running': [{ value: 2 }],
    },
  };
  const report = {
    endpoints: [{ url }, { url: 'http://other:2/metrics' }],
    families: {
      'vllm:e2e_request_latency_seconds': { type: 'histogram', help: 'latency' },
      'vllm:num_requests_running': { type: 'gauge', help: 'running' },
    },
  } as unknown as ScrapeReport;
  const meta = serverMetricsMetadata(new Map([[url, [line]]]), report);
  assert.deepEqual(Object.keys(meta.endpoints), [url, 'http://other:2/metrics']);
  assert.deepEqual(meta.endpoints[url], {
    endpoint_url: url,
    endpoint_display: url,
    metric_schemas: {
      'vllm:e2e_request_latency_seconds': {
        type: 'histogram',
        help: 'latency',
        bucket_labels: ['0.5', '1', '2.5', '10', '+Inf'],
        quantile_labels: null,
      },
      'vllm:num_requests_running': {
        type: 'gauge',
        help: 'running',
        bucket_labels: null,
        quantile_labels: null,
      },
    },
  });
  assert.deepEqual(meta.endpoints['http://other:2/metrics']?.metric_schemas, {});
});
