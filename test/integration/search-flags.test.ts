/**
 * `tokenload search` refuses every bad flag with exit code 2 and a message naming it, before
 * anything is sent: a stub server on 127.0.0.1 counts the requests it sees, and must see none.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runCliInProcess } from '../helpers/cli-in-process.js';

let server: Server;
let seen = 0;
let url = '';
const dir = mkdtempSync(join(tmpdir(), 'tokenload-search-flags-'));
const timed = join(dir, 'timed.jsonl');
const untimed = join(dir, 'untimed.jsonl');
writeFileSync(
  timed,
  '{"timestamp": 0, "input_length": 8, "output_length": 2}\n{"timestamp": 100, "input_length": 8, "output_length": 2}\n',
);
writeFileSync(untimed, '{"input_length": 8, "output_length": 2}\n{"input_length": 8, "output_length": 2}\n');

before(async () => {
  server = createServer((_req, res) => {
    seen++;
    res.writeHead(500).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

const base = (): string[] => [
  'search',
  '-m',
  'm',
  '--tokenizer',
  'builtin',
  '--url',
  url,
  '--streaming',
  '--artifact-dir',
  join(dir, 'out'),
];

/** A valid concurrency search, and a speedup search: each case adds what it breaks. */
const RANGE = ['--search-over', 'concurrency', '--search-range', '1,8'];
const CONCURRENCY = [...RANGE, '--ttft-sla-ms', '100'];
const SPEEDUP = ['--search-over', 'speedup', '--search-range', '1,8', '--ttft-sla-ms', '100'];

const CASES: Array<{ name: string; args: string[]; says: RegExp }> = [
  {
    name: 'no --search-over',
    args: ['--search-range', '1,8', '--ttft-sla-ms', '100'],
    says: /--search-over is required/,
  },
  {
    name: 'no --search-range',
    args: ['--search-over', 'concurrency', '--ttft-sla-ms', '100'],
    says: /--search-range LO,HI is required/,
  },
  {
    name: 'empty range',
    args: ['--search-over', 'request-rate', '--search-range', '5,5', '--ttft-sla-ms', '100'],
    says: /LO must be below HI/,
  },
  {
    name: 'LO above HI',
    args: ['--search-over', 'request-rate', '--search-range', '10,5', '--ttft-sla-ms', '100'],
    says: /LO must be below HI/,
  },
  {
    name: 'LO at 0',
    args: ['--search-over', 'request-rate', '--search-range', '0,5', '--ttft-sla-ms', '100'],
    says: /LO must be above 0/,
  },
  {
    name: 'fractional concurrency',
    args: ['--search-over', 'concurrency', '--search-range', '1.5,8', '--ttft-sla-ms', '100'],
    says: /whole numbers/,
  },
  {
    name: 'unknown tag',
    args: [...RANGE, '--search-sla', 'time_to_first_tokn:p95:lt:100'],
    says: /not a metric tokenload exports \(did you mean time_to_first_token\?\); known tags: .*request_error_rate/,
  },
  {
    name: 'bad stat',
    args: [...RANGE, '--search-sla', 'time_to_first_token:p97:lt:100'],
    says: /stat "p97" is not one of/,
  },
  {
    name: 'bad op',
    args: [...RANGE, '--search-sla', 'time_to_first_token:p95:lessthan:100'],
    says: /op "lessthan" is not one of/,
  },
  {
    name: 'not a 4-tuple',
    args: [...RANGE, '--search-sla', 'time_to_first_token:p95:100'],
    says: /expected TAG:STAT:OP:THRESHOLD/,
  },
  {
    name: 'bad threshold',
    args: [...RANGE, '--search-sla', 'time_to_first_token:p95:lt:abc'],
    says: /not a finite number/,
  },
  {
    name: 'a percentile of a run-level metric',
    args: [...RANGE, '--search-sla', 'request_throughput:p95:gt:3'],
    says: /only avg applies/,
  },
  { name: 'no SLO', args: ['--search-over', 'concurrency', '--search-range', '1,8'], says: /no SLO/ },
  {
    name: 'a list in --concurrency',
    args: [
      '--search-over',
      'request-rate',
      '--search-range',
      '1,8',
      '--concurrency',
      '1,4',
      '--ttft-sla-ms',
      '100',
    ],
    says: /--concurrency: a list/,
  },
  {
    name: 'the searched flag given',
    args: [
      '--search-over',
      'request-rate',
      '--search-range',
      '1,8',
      '--request-rate',
      '4',
      '--ttft-sla-ms',
      '100',
    ],
    says: /--request-rate cannot be given with --search-over request-rate: the search sets it/,
  },
  {
    name: 'speedup on synthetic prompts',
    args: SPEEDUP,
    says: /give a timestamped trace/,
  },
  {
    name: 'speedup without a fixed schedule',
    args: [
      ...SPEEDUP,
      '--input-file',
      timed,
      '--custom-dataset-type',
      'mooncake_trace',
      '--no-fixed-schedule',
    ],
    says: /needs --fixed-schedule/,
  },
  {
    name: 'speedup on a trace without timestamps',
    args: [
      ...SPEEDUP,
      '--input-file',
      untimed,
      '--custom-dataset-type',
      'mooncake_trace',
      '--fixed-schedule',
    ],
    says: /no row of .* has a timestamp/,
  },
  {
    name: '--resume of a folder without a history',
    args: [...CONCURRENCY, '--resume', dir],
    says: /--resume .*: no search_history.json there/,
  },
  {
    name: 'a bad precision',
    args: [...CONCURRENCY, '--search-precision', '1.5'],
    says: /--search-precision/,
  },
  {
    name: '--goodput beside --slo-attainment-fraction',
    args: [...CONCURRENCY, '--slo-attainment-fraction', '0.9', '--goodput', 'time_to_first_token:50'],
    says: /--goodput cannot be given with --slo-attainment-fraction/,
  },
  ...[
    ['a negative time', 'time_to_first_token:p95:lt:-5', /is a time: the threshold must be above 0 ms/],
    [
      'an error rate above 1',
      'request_error_rate:p99:lt:5',
      /is a fraction: the threshold must lie in \[0, 1\]/,
    ],
    ['a floor on a throughput that grows with load', 'request_throughput:avg:gt:60', /grows with load/],
  ].map(([what, sla, says]) => ({
    name: `an SLO with ${what as string}`,
    args: [...RANGE, '--search-sla', sla as string],
    says: says as RegExp,
  })),
];

for (const c of CASES) {
  test(`search refuses ${c.name} with exit 2 before sending`, async () => {
    const { code, stderr } = await runCliInProcess([...base(), ...c.args]);
    assert.equal(code, 2, stderr);
    assert.match(stderr, c.says);
    assert.equal(seen, 0, 'the server saw a request');
  });
}

test('search refuses a TTFT SLO without --streaming', async () => {
  const args = base().filter((a) => a !== '--streaming');
  const { code, stderr } = await runCliInProcess([
    ...args,
    '--search-over',
    'concurrency',
    '--search-range',
    '1,8',
    '--ttft-sla-ms',
    '100',
  ]);
  assert.equal(code, 2, stderr);
  assert.match(stderr, /--ttft-sla-ms \(time_to_first_token\) needs --streaming/);
  assert.equal(seen, 0);
});

test('search --resume of a damaged history (a field gone) exits 2 naming the file and the field', async () => {
  const folder = join(dir, 'damaged');
  mkdirSync(folder, { recursive: true });
  const sla = {
    metric_tag: 'time_to_first_token',
    stat: 'p95',
    op: 'lt',
    threshold: 100,
    source: '--ttft-sla-ms',
  };
  const history = {
    schema_version: '1.0',
    tokenload_version: '0',
    command: 'tokenload search',
    config: {
      search_over: 'concurrency',
      swept_dim_path: 'concurrency',
      range: { lo: 1, hi: 8 },
      kind: 'int',
      precision: 0.05,
      max_probes: 20,
      trials: 1,
      sla_filters: [sla],
      slo_attainment_fraction: null,
      random_seed: 42,
    },
    // One probe whose `slas` was deleted by hand.
    iterations: [{ iteration_idx: 0, folder: 'probe-01', load: 1, status: 'pass' }],
    boundary_summary: null,
    convergence_reason: null,
    client_limit: null,
  };
  writeFileSync(join(folder, 'search_history.json'), JSON.stringify(history));
  const { code, stderr } = await runCliInProcess([...base(), ...CONCURRENCY, '--resume', folder]);
  assert.equal(code, 2, stderr);
  assert.match(stderr, /search_history\.json: field iterations\[0\]\.\w+/);
  assert.equal(seen, 0, 'the server saw a request');
});
