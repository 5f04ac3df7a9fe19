/**
 * Bad input a newcomer met that was taken silently or explained badly (#23 item 8): each is now
 * refused naming the flag, file, line or key (exit 2 for a usage error, 1 for a bad input file), or
 * warned about on the console. Through the CLI's `main` in this process, usage errors and runs
 * against `--simulator` alike (its simulator is a child process all the same).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseProfileArgs } from '../../src/index.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-bad-input-'));
  dirs.push(dir);
  return dir;
}

/** Runs `tokenload <args>` in this process; resolves with its exit code and what it wrote to stderr. */
const tokenload = runCliInProcess;

/** Runs `run` with `HOME` at `home` (where `profile` looks for the calibration file), restored after. */
async function withHome<T>(home: string, run: () => Promise<T>): Promise<T> {
  const saved = process.env.HOME;
  process.env.HOME = home;
  try {
    return await run();
  } finally {
    if (saved === undefined) delete process.env.HOME;
    else process.env.HOME = saved;
  }
}

/**
 * The spawned simulator of the runs that send: fixed timing (the engine model would spend seconds
 * prefilling a 2^20-token prompt) and no warm-up (these runs check messages, not timing).
 */
const QUICK_SIMULATOR = ['--simulator-option', 'mode=fixed', '--simulator-option', 'warmup-ms=0'];

/** A profile command line that is valid up to `extra`; nothing runs before the flags are read. */
const PROFILE = ['profile', '--simulator', '-m', 'm', '--tokenizer', 'builtin'];

test('integer flags take digits only: 0x1, " 1", 1e3, 1.0 are refused naming the flag, exit 2', async () => {
  const cases: Array<[string[], RegExp]> = [
    [
      ['--shard-index', '0x1'],
      /'--shard-index <i>' argument '0x1' is invalid\. expected an integer, digits only \(1000\), got "0x1"/,
    ],
    [
      ['--shard-index', ' 1'],
      /'--shard-index <i>' argument ' 1' is invalid\. expected an integer, digits only \(1000\), got " 1"/,
    ],
    [['--shard-index', '1e3'], /expected an integer, digits only \(1000\), got "1e3"/],
    [
      ['--request-count', '1.0'],
      /'--request-count <n>' argument '1\.0' is invalid\. expected an integer, digits only \(1000\)/,
    ],
    [
      ['--concurrency', '1,0x2'],
      /'--concurrency <n\[,n…\]>' argument '1,0x2' is invalid\. expected an integer, digits only \(1000\), got "0x2"/,
    ],
    [
      ['--request-rate', '0x10'],
      /'--request-rate <r\[,r…\]>' argument '0x10' is invalid\. expected a decimal number \(2\.5, 1000, 1e3\), got "0x10"/,
    ],
    [['--prewarm-connections', '0x1'], /'--prewarm-connections <n\|auto>' argument '0x1' is invalid/],
    [
      ['--simulator-option', 'port=1e3'],
      /argument 'port=1e3' is invalid\. port: expected an integer, digits only \(1000\), got "1e3"/,
    ],
    [
      ['--goodput', 'time_to_first_token:0x10'],
      /--goodput item "time_to_first_token:0x10": expected tag:value with a value >= 0, a decimal number \(2\.5, 1000, 1e3\)/,
    ],
  ];
  for (const [extra, message] of cases) {
    const r = await tokenload([...PROFILE, '--shard-count', '2', '--concurrency', '2', ...extra]);
    assert.equal(r.code, 2, `${extra.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, extra.join(' '));
  }
  // Commands whose options are not schema-derived parse the same way.
  const analyze = await tokenload(['analyze-trace', '--isl-block-size', '0x10', 'trace.jsonl']);
  assert.equal(analyze.code, 2, analyze.stderr);
  assert.match(
    analyze.stderr,
    /'--isl-block-size <n>' argument '0x10' is invalid\. expected an integer, digits only \(1000\), got "0x10"/,
  );
  // And a string in a -f config file, as typed text.
  const dir = freshDir();
  const file = join(dir, 'run.yaml');
  writeFileSync(file, 'shard-index: " 1"\nshard-count: 2\nconcurrency: 2\n');
  const fromFile = await tokenload([...PROFILE, '-f', file]);
  assert.equal(fromFile.code, 2, fromFile.stderr);
  assert.match(
    fromFile.stderr,
    new RegExp(
      `--config ${file}:1: key "shard-index": expected an integer, digits only \\(1000\\), got " 1"`,
    ),
  );
});

test('--start-at on a date that does not exist (February 30, hour 24, month 13) is refused, not rolled over', async () => {
  const cases: Array<[string, string]> = [
    ['2026-02-30T00:00:00Z', 'February 2026 has no day 30 (it has 28)'],
    ['2026-13-01T00:00:00Z', 'there is no month 13'],
    ['2026-01-01T24:00:00Z', '24:00:00 is not a time of day'],
    ['2026-01-01T00:00:00+25:00', '+25:00 is not a zone offset'],
  ];
  for (const [time, why] of cases) {
    const r = await tokenload([...PROFILE, '--start-at', time]);
    assert.equal(r.code, 2, `${time}: ${r.stderr}`);
    assert.ok(
      r.stderr.includes(
        `'--start-at <time>' argument '${time}' is invalid. expected an ISO 8601 time with a zone (2025-06-01T12:00:00Z) or epoch milliseconds, got "${time}": ${why}`,
      ),
      r.stderr,
    );
  }
  // February 29 of a leap year is a date: refused only for being too far ahead.
  const leap = await tokenload([...PROFILE, '--start-at', '2028-02-29T00:00:00Z']);
  assert.match(leap.stderr, /--start-at 2028-02-29T00:00:00\.000Z is [\d.]+ h ahead/);
});

test('a corrupt calibration file is named in a warning (the rate check is skipped), not ignored', async () => {
  const home = freshDir();
  mkdirSync(join(home, '.cache', 'tokenload'), { recursive: true });
  const file = join(home, '.cache', 'tokenload', 'calibration.json');
  const run = ['profile', '--simulator', '-m', 'm', '--tokenizer', 'builtin', '--request-rate', '50'];
  run.push('--request-count', '1', '--ui', 'none', '--client-warmup-ms', '0', '--no-server-metrics');
  run.push(...QUICK_SIMULATOR);
  const cases: Array<[string, RegExp]> = [
    [
      '{"schemaVersion": 2, "measuredAt": "x", "maxRequestRatePerS": "fast", "rateSteps": []}',
      /not a calibration file of tokenload calibrate: field maxRequestRatePerS: expected a number, got "fast"/,
    ],
    ['{"schemaVersion": 2,', /not JSON \(/],
  ];
  for (const [content, what] of cases) {
    writeFileSync(file, content);
    const r = await withHome(home, () => tokenload([...run, '--artifact-dir', join(home, 'out')]));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`\\[tokenload\\] warning: ${file}: ${what.source}`));
    assert.match(
      r.stderr,
      /the --request-rate check against this machine’s calibration is skipped; rerun tokenload calibrate/,
    );
  }
});

test('-f: an unknown key gets "Did you mean", in the key’s own spelling, as an unknown flag does', async () => {
  const dir = freshDir();
  const cases: Array<[string, string]> = [
    ['reqest-rate', 'request-rate'],
    ['reqest_rate', 'request_rate'],
    ['requestRat', 'requestRate'],
  ];
  for (const [key, guess] of cases) {
    const file = join(dir, `${key}.yaml`);
    writeFileSync(file, `# a run\nconcurrency: 2\n${key}: 3\n`);
    const r = await tokenload([...PROFILE, '-f', file]);
    assert.equal(r.code, 2, r.stderr);
    assert.ok(
      r.stderr.includes(`error: --config ${file}:3: unknown key "${key}". (Did you mean ${guess}?)`),
      r.stderr,
    );
  }
  // The CLI's own wording for a mistyped flag, which the file's matches.
  const flag = await tokenload([...PROFILE, '--reqest-rate', '3']);
  assert.match(flag.stderr, /\(Did you mean --request-rate\?\)/);
  const far = join(dir, 'far.yaml');
  writeFileSync(far, 'colour: blue\n');
  const r = await tokenload([...PROFILE, '-f', far]);
  assert.ok(r.stderr.includes(`error: --config ${far}:1: unknown key "colour".\n`), r.stderr);
});

test('-f with AIPerf’s sectioned YAML: read as tokenload keys, or refused naming each key path it lacks', async () => {
  const dir = freshDir();
  const v2 = join(dir, 'benchmark.yaml');
  writeFileSync(
    v2,
    [
      'schemaVersion: "2.0"',
      'benchmark:',
      '  model: Qwen/Qwen3-0.6B',
      '  endpoint: {url: "http://localhost:8000", type: chat, streaming: true}',
      '  dataset: {type: synthetic, entries: 50, prompts: {isl: 512, osl: 128}}',
      '  phases:',
      '    - {name: warmup, type: concurrency, requests: 5}',
      '    - {name: profiling, type: concurrency, requests: 20}',
      '  artifacts: {dir: ./out}',
      'sweep: {type: grid, parameters: {concurrency: [8, 16]}}',
      'multi_run: {num_runs: 2, cooldown_seconds: 1}',
      '',
    ].join('\n'),
  );
  const configs = parseProfileArgs(['-f', v2]);
  assert.deepEqual(
    configs.map((c) => [c.concurrency, c.artifactDir]),
    [
      [8, join('out', 'profile_runs', 'trial_0001', 'concurrency_8')],
      [16, join('out', 'profile_runs', 'trial_0001', 'concurrency_16')],
      [8, join('out', 'profile_runs', 'trial_0002', 'concurrency_8')],
      [16, join('out', 'profile_runs', 'trial_0002', 'concurrency_16')],
    ],
  );
  const c = configs[0];
  assert.deepEqual(
    [c?.models, c?.url, c?.endpointType, c?.streaming, c?.requestCount, c?.warmupRequestCount],
    [['Qwen/Qwen3-0.6B'], ['http://localhost:8000'], 'chat', true, 20, 5],
  );
  assert.deepEqual(
    [c?.synthetic?.numDatasetEntries, c?.synthetic?.isl, c?.synthetic?.osl, c?.profileRunCooldownSeconds],
    [50, 512, 128, 1],
  );
  // What tokenload lacks is refused before anything runs, each key by its path.
  const lacking = join(dir, 'lacking.yaml');
  writeFileSync(
    lacking,
    [
      'schemaVersion: "2.0"',
      'variables: {base: 8}',
      'benchmark:',
      '  model: m',
      '  phases:',
      '    - {name: warmup, concurrency: 4, requests: 5}',
      '    - {name: profiling, type: user_centric, requests: 20}',
      '',
    ].join('\n'),
  );
  const r = await tokenload(['profile', '-f', lacking]);
  assert.equal(r.code, 2, r.stderr);
  assert.ok(
    r.stderr.includes(
      `error: --config ${lacking}:1: key "schemaVersion": AIPerf's sectioned config layout; tokenload reads its keys where it has the option, but not: variables; benchmark.phases.0.concurrency (tokenload warms up at the profiling phase’s load); benchmark.phases.1.type (phase type user_centric).`,
    ),
    r.stderr,
  );
  // AIPerf's older sections (endpoint:, loadgen:), by its config field names.
  const v1 = join(dir, 'sections.yaml');
  writeFileSync(
    v1,
    'endpoint:\n  model_names: [m]\n  url: http://localhost:8000\nloadgen:\n  concurrency: 4\n  request_count: 9\n',
  );
  const [old] = parseProfileArgs(['-f', v1]);
  assert.deepEqual(
    [old?.models, old?.url, old?.concurrency, old?.requestCount],
    [['m'], ['http://localhost:8000'], 4, 9],
  );
  writeFileSync(
    v1,
    'endpoint:\n  model_names: [m]\nloadgen:\n  concurrency: 4\n  request_cancellation_rate_typo: 1\n',
  );
  const typo = await tokenload(['profile', '-f', v1]);
  assert.equal(typo.code, 2, typo.stderr);
  assert.match(
    typo.stderr,
    /sections\.yaml:1: key "endpoint": .*but not: loadgen\.request_cancellation_rate_typo\./,
  );
  // A flat file's object-valued keys (--extra-inputs) are tokenload's own, not a section.
  const flat = join(dir, 'flat.yaml');
  writeFileSync(flat, 'extra-inputs: {ignore_eos: true}\nrequest-count: 0\n');
  const f = await tokenload([...PROFILE, '-f', flat]);
  assert.match(f.stderr, /flat\.yaml:2: key "request-count": expected a number >= 1, got 0/);
});

test('--goodput with an unknown tag lists the tags it takes (and the closest), exit 2', async () => {
  const r = await tokenload([...PROFILE, '--goodput', 'time_to_frist_token:300']);
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /--goodput item "time_to_frist_token:300": "time_to_frist_token" is not a metric \(Did you mean time_to_first_token\?\); a goodput SLO takes one of: time_to_first_token, .*request_latency, .*inter_token_latency, /,
  );
  const run = await tokenload([...PROFILE, '--goodput', 'request_throughput:3']);
  assert.match(
    run.stderr,
    /"request_throughput" is not a per-request metric; a goodput SLO takes one of: time_to_first_token/,
  );
});

test('--request-rate-series: a bad file or point is refused naming the file, the point and the field; so are the options it cannot go with (exit 2)', async () => {
  const dir = freshDir();
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const good = file('good.json', '[{"time_s":0,"qps":1},{"time_s":2,"qps":5}]');
  const cases: Array<[string[], RegExp]> = [
    [['--request-rate-series', join(dir, 'none.json')], /cannot read it \(ENOENT\)/],
    [['--request-rate-series', file('text.json', 'qps=5')], /text\.json: not JSON/],
    [['--request-rate-series', file('obj.json', '{"rate":[]}')], /obj\.json: expected \{"points"/],
    [
      ['--request-rate-series', file('empty.json', '{"points":[]}')],
      /empty\.json: points: the list is empty/,
    ],
    [
      ['--request-rate-series', file('late.json', '{"points":[{"time_s":1,"qps":2}]}')],
      /late\.json: points\[0\]\.time_s: the first point must be at time_s 0, got 1/,
    ],
    [
      [
        '--request-rate-series',
        file('order.json', '[{"time_s":0,"qps":1},{"time_s":5,"qps":2},{"time_s":5,"qps":3}]'),
      ],
      /order\.json: points\[2\]\.time_s: 5 is not after points\[1\]\.time_s 5/,
    ],
    [
      ['--request-rate-series', file('neg.json', '[{"time_s":0,"qps":1},{"time_s":1,"qps":-2}]')],
      /neg\.json: points\[1\]\.qps: must be >= 0, got -2/,
    ],
    [
      ['--request-rate-series', file('str.json', '[{"time_s":0,"qps":"4"}]')],
      /str\.json: points\[0\]\.qps: expected a number, got "4"/,
    ],
    [
      ['--request-rate-series', file('miss.json', '[{"time_s":0,"qps":1},{"time_s":1}]')],
      /miss\.json: points\[1\]\.qps: missing/,
    ],
    [
      ['--request-rate-series', file('extra.json', '[{"time_s":0,"qps":1,"rate":2}]')],
      /extra\.json: points\[0\]\.rate: unknown field/,
    ],
    [
      ['--request-rate-series', file('top.json', '{"points":[{"time_s":0,"qps":1}],"extra":1}')],
      /top\.json: extra: unknown field/,
    ],
    [
      ['--request-rate-series', file('huge.json', '[{"time_s":0,"qps":1e400}]')],
      /huge\.json: points\[0\]\.qps: Infinity is not a finite number/,
    ],
    [
      ['--request-rate-series', file('zero.json', '[{"time_s":0,"qps":0},{"time_s":1,"qps":0}]')],
      /zero\.json: points: every qps is 0/,
    ],
    [
      ['--request-rate-series', file('one.json', '[{"time_s":0,"qps":3}]')],
      /one\.json: its only point is at time_s 0, and without --request-count or --benchmark-duration/,
    ],
    [
      ['--request-rate-series', good, '--request-rate', '5'],
      /--request-rate-series cannot be combined with --request-rate \(/,
    ],
    [
      [
        '--request-rate-series',
        good,
        '--user-centric-rate',
        '5',
        '--num-users',
        '2',
        '--session-turns-mean',
        '2',
      ],
      /--request-rate-series cannot be combined with --user-centric-rate/,
    ],
    [
      ['--request-rate-series', good, '--request-rate-ramp-duration', '2'],
      /--request-rate-series cannot be combined with --request-rate-ramp-duration/,
    ],
  ];
  for (const [extra, message] of cases) {
    const r = await tokenload([...PROFILE, ...extra]);
    assert.equal(r.code, 2, `${extra.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, extra.join(' '));
    // Every message names the file (a flag value's: after the flag and its value).
    if (extra[1] !== good) assert.ok(r.stderr.includes(`${extra[1]}: `), r.stderr);
  }
});

/** A quick run (in this process) against the built-in simulator into a new folder; returns the folder too. */
async function quickRun(extra: string[]): Promise<{ code: number | null; stderr: string; dir: string }> {
  const dir = join(freshDir(), 'out');
  const args = ['profile', '--simulator', '-m', 'm', '--tokenizer', 'builtin', '--ui', 'none'];
  args.push(
    '--client-warmup-ms',
    '0',
    '--no-server-metrics',
    ...QUICK_SIMULATOR,
    '--artifact-dir',
    dir,
    ...extra,
  );
  const r = await tokenload(args);
  return { code: r.code, stderr: r.stderr, dir };
}

function summaryOf(dir: string): { warnings: string[]; replay?: { input_error: string | null } } {
  return JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8'));
}

test('--streaming with the embeddings endpoint: ignored as AIPerf does, but said on the console and in the summary', async () => {
  const r = await quickRun(['--endpoint-type', 'embeddings', '--streaming', '--request-count', '2']);
  assert.equal(r.code, 0, r.stderr);
  const warning =
    '--streaming is ignored: --endpoint-type embeddings answers with one JSON body, never a stream (AIPerf ignores it too); streaming-only metrics (time to first token, inter-token latency) are not measured';
  assert.ok(r.stderr.includes(`[tokenload] warning: ${warning}\n`), r.stderr);
  assert.ok(summaryOf(r.dir).warnings.includes(warning));
});

function bailianRow(chatId: number, timestamp: number, inputLength: number): string {
  const row = { chat_id: chatId, parent_chat_id: -1, timestamp, input_length: inputLength, output_length: 2 };
  return `${JSON.stringify({ ...row, type: 'text', turn: 1, hash_ids: [] })}\n`;
}

test('a prompt over 2^24 tokens is refused naming file, line and field (or the flag); streamed, reading stops there', async () => {
  const trace = join(freshDir(), 'trace.jsonl');
  writeFileSync(trace, bailianRow(1, 0, 40) + bailianRow(2, 0.2, 20_000_000));
  const refusal = `${trace}:2: field "input_length": 20000000 tokens: more than 16777216 tokens (2^24) is beyond every model's context window, and a body of over 100 MB: check the value`;
  const replay = ['--input-file', trace, '--custom-dataset-type', 'bailian_trace'];
  const whole = await quickRun([...replay, '--no-trace-streaming']);
  assert.equal(whole.code, 1, whole.stderr);
  assert.ok(whole.stderr.includes(`error: ${refusal}\n`), whole.stderr);
  assert.equal(existsSync(join(whole.dir, 'profile_export.jsonl')), false, 'nothing was sent');
  const streamed = await quickRun(replay);
  assert.equal(streamed.code, 1, streamed.stderr);
  assert.ok(streamed.stderr.includes(`error: ${refusal}\n`), streamed.stderr);
  assert.equal(summaryOf(streamed.dir).replay?.input_error, refusal);
  const isl = await quickRun(['--isl', '20000000', '--request-count', '1']);
  assert.equal(isl.code, 2, isl.stderr);
  assert.match(isl.stderr, /^error: --isl: a prompt of 2\d{7} tokens: more than 16777216 tokens \(2\^24\)/m);
});

test('a prompt over 2^20 tokens is warned about (loaded whole: before the run; streamed: when read) and in the summary', async () => {
  const trace = join(freshDir(), 'trace.jsonl');
  writeFileSync(trace, bailianRow(1, 0, 40) + bailianRow(2, 0.2, 1_048_577) + bailianRow(3, 0.4, 40));
  const warning = `1 prompt of the input asks for more than 1048576 tokens (2^20), beyond the context window of nearly every served model (first: ${trace}:2: field "input_length": 1048577 tokens); each is sent as a body of several MB: check the input`;
  for (const mode of ['--no-trace-streaming', '--trace-streaming']) {
    const r = await quickRun(['--input-file', trace, '--custom-dataset-type', 'bailian_trace', mode]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stderr.includes(`[tokenload] warning: ${warning}\n`), `${mode}: ${r.stderr}`);
    if (mode === '--no-trace-streaming')
      assert.ok(r.stderr.indexOf(warning) < r.stderr.indexOf('simulator started'), 'said before the run');
    assert.ok(summaryOf(r.dir).warnings.includes(warning), mode);
  }
  // The simulator's KV cache holds the prompt (its default 40,000 blocks of 16 tokens would not).
  const isl = await quickRun([
    '--isl',
    '1048577',
    '--request-count',
    '1',
    '--num-dataset-entries',
    '1',
    '--simulator-option',
    'cache-capacity-blocks=70000',
  ]);
  assert.equal(isl.code, 0, isl.stderr);
  assert.match(
    isl.stderr,
    /\[tokenload\] warning: 1 prompt of the input asks for more than 1048576 tokens .*\(first: --isl: a prompt of 1048577 tokens\)/,
  );
});
