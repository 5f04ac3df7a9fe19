/**
 * `tokenload search` (the built CLI, a process of its own) against the simulator's fixed mode with a
 * known capacity: at most N = 6 requests served at once, each 150 ms to its first token and 300 ms in
 * all (6 output tokens, 30 ms apart), so the server answers at most 20 requests/s, and a request
 * that has to wait for a slot gets a TTFT above 150 ms, up to 450 ms. The TTFT SLO is 250 ms (a late
 * client stops a search once its send lag p99 passes a tenth of it: 25 ms).
 * One simulator (a child process) serves every search of this file, as a real server would.
 *
 * Serial: the boundary is where a queue starts to form on the server; a client stalled on a shared
 * core sends late, forms queues of its own or none, and a late client stops the search (exit 5)
 * rather than judging the server. (A client that cannot deliver its load at all, whatever else runs,
 * is test/integration/search-client-limit.test.ts.)
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SearchHistory } from '../../src/search/history-types.js';
import { type SpawnedSimulator, spawnSimulator } from '../../src/simulator/spawn.js';
import { builtCli } from '../helpers/built-package.js';
import { type NodeExit, runNode } from '../helpers/run-node.js';

const N = 6;
const CAPACITY_PER_S = 20;
const dir = mkdtempSync(join(tmpdir(), 'tokenload-search-'));
let sim: SpawnedSimulator;

before(async () => {
  sim = await spawnSimulator({ mode: 'fixed', ttftMs: 150, itlMs: 30, fixedMaxRunning: N, warmupMs: 0 });
});
after(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The options every search here shares: the model, the shared simulator, 6 output tokens, the TTFT SLO. */
function common(out: string): string[] {
  return [
    ...['-m', 'm', '--tokenizer', 'builtin', '--streaming', '--url', sim.url],
    ...['--isl', '32', '--osl', '6', '--ttft-sla-ms', '250', '--artifact-dir', out],
  ];
}

type Exit = NodeExit;

/** Runs the built CLI's `search`; `onStart` gets a way to signal it. */
function runSearch(args: string[], onStart?: (kill: (s: NodeJS.Signals) => void) => void): Promise<Exit> {
  return runNode([builtCli(), 'search', ...args], 300_000, (child) => onStart?.((s) => child.kill(s)));
}

function historyOf(out: string): SearchHistory {
  return JSON.parse(readFileSync(join(out, 'search_history.json'), 'utf8')) as SearchHistory;
}

/** A search that ended on a late client is no verdict on the boundary: the test says so and stops. */
function assertAnswered(run: Exit, out: string): SearchHistory {
  const history = historyOf(out);
  assert.equal(history.client_limit, null, `the client could not deliver a probe: ${run.stderr}`);
  assert.equal(run.code, 0, run.stderr);
  return history;
}

const CONCURRENCY_ARGS = [
  ...['--search-over', 'concurrency', '--search-range', '1,12', '--benchmark-duration', '1.5'],
  ...['--slo-attainment-fraction', '0.9'],
];

test('request rate: the boundary brackets the capacity (20/s) within the precision, as a cliff', async () => {
  const out = join(dir, 'rate');
  const run = await runSearch([
    ...common(out),
    ...['--search-over', 'request-rate', '--search-range', '12,48', '--search-precision', '0.1'],
    ...['--arrival-pattern', 'constant', '--benchmark-duration', '2'],
  ]);
  const b = assertAnswered(run, out).boundary_summary;
  const pass = b.feasible_max?.value as number;
  const fail = b.infeasible_min?.value as number;
  // A rate above the capacity queues (a pass there is wrong); below it nothing queues (a fail is wrong).
  assert.ok(pass <= CAPACITY_PER_S * 1.05, `passed at ${pass}/s`);
  assert.ok(fail >= CAPACITY_PER_S * 0.95, `failed at ${fail}/s`);
  assert.ok((fail - pass) / pass <= 0.1 + 1e-9, `resolution ${(fail - pass) / pass}`);
  assert.equal(b.boundary_type, 'cliff');
});

test('speedup: a trace at 10 requests/s is served up to 2× (the capacity / the trace rate)', async () => {
  const out = join(dir, 'speedup');
  const trace = join(dir, 'steady.jsonl');
  const rows = Array.from({ length: 30 }, (_, i) => ({
    timestamp: i * 100,
    input_length: 32,
    output_length: 6,
    hash_ids: [1000 + i],
  }));
  writeFileSync(trace, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  const run = await runSearch([
    ...common(out),
    ...['--input-file', trace, '--custom-dataset-type', 'mooncake_trace', '--fixed-schedule'],
    ...['--search-over', 'speedup', '--search-range', '1.5,6', '--search-precision', '0.1'],
  ]);
  const history = assertAnswered(run, out);
  const b = history.boundary_summary;
  assert.equal(history.config.swept_dim_path, 'synthesis_speedup_ratio');
  const pass = b.feasible_max?.value as number;
  const fail = b.infeasible_min?.value as number;
  assert.ok(pass <= 2 * 1.1, `passed at ${pass}×`);
  assert.ok(fail >= 2 * 0.95, `failed at ${fail}×`);
  // Every probe replayed the same 30 rows.
  for (const it of history.iterations) assert.equal(it.request_count + it.error_count, 30);
});

test('concurrency, interrupted and resumed: Ctrl-C writes the history and exits 130; --resume finds the capacity N (N passes, N + 1 fails)', async () => {
  const out = join(dir, 'conc');
  const second = join(out, 'probe-02', 'profile_export_aiperf.json');
  const stopped = await runSearch([...common(out), ...CONCURRENCY_ARGS], (kill) => {
    void (async () => {
      for (let i = 0; i < 600 && !existsSync(second); i++) await sleep(100);
      kill('SIGINT');
    })();
  });
  assert.equal(stopped.code, 130, stopped.stderr);
  const cut = historyOf(out);
  assert.equal(cut.convergence_reason, null);
  assert.ok(cut.iterations.length >= 2 && cut.iterations.length < 6, `${cut.iterations.length} probes`);
  assert.ok(existsSync(join(out, 'report.html')), 'an interrupted search still gets its report');
  // A resume with other search flags is refused, naming what differs.
  const other = await runSearch([
    ...common(out),
    ...CONCURRENCY_ARGS,
    '--search-precision',
    '0.2',
    '--resume',
    out,
  ]);
  assert.equal(other.code, 2);
  assert.match(other.stderr, /precision/);
  // So is one whose probes would run with other profile options (here a shorter duration).
  const shorter = CONCURRENCY_ARGS.map((a) => (a === '1.5' ? '1' : a));
  const changed = await runSearch([...common(out), ...shorter, '--resume', out]);
  assert.equal(changed.code, 2);
  assert.match(changed.stderr, /the profile options .* \(the history was made by: tokenload search /);
  const resumed = await runSearch([...common(out), ...CONCURRENCY_ARGS, '--resume', out]);
  const history = assertAnswered(resumed, out);
  assert.deepEqual(
    history.iterations.slice(0, cut.iterations.length).map((it) => it.folder),
    cut.iterations.map((it) => it.folder),
  );
  const folders = readdirSync(out)
    .filter((n) => /^probe-\d+$/.test(n))
    .sort();
  assert.deepEqual(
    history.iterations.map((it) => it.folder),
    folders,
    'one history entry per probe folder',
  );
  for (const it of history.iterations) {
    assert.ok(existsSync(join(out, it.folder, 'profile_export_aiperf.json')));
    assert.equal(it.variation_values.concurrency, it.load);
    if (it.status === 'interrupted') continue;
    // The attainment is each probe's share of requests meeting the TTFT SLO, and it decides with the SLO.
    assert.ok(it.attainment !== null && it.attainment.required === 0.9);
    const fraction = it.attainment.fraction as number;
    assert.equal(it.attainment.passed, fraction >= 0.9);
    if (it.status === 'pass') assert.ok(it.attainment.passed && it.slas[0]?.passed);
  }
  const b = history.boundary_summary;
  assert.equal(b.feasible_max?.value, N);
  assert.equal(b.infeasible_min?.value, N + 1);
  assert.equal(history.iterations[b.infeasible_min?.iteration_idx as number]?.status, 'fail');
  assert.equal(history.convergence_reason, 'precision_reached');
  assert.match(resumed.stdout, /largest concurrency meeting the SLOs: 6 \(probe-\d+\); 7 failed: /);
  assert.equal(history.resumed_by?.length, 1);
});
