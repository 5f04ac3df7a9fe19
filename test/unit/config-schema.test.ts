/**
 * The profile configuration schema, as a library caller meets it through `profileConfig()` and
 * `profileConfigs()`: every cross-field rule and every bad value throws a coded `ConfigError` naming
 * the option, and the defaults that depend on other fields resolve as the CLI resolves them.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ProfileConfigInput } from '../../src/config/fields.js';
import { ProfileConfigSchema, profileConfig } from '../../src/config/schema.js';
import type { SweepInput } from '../../src/config/sweep.js';
import { profileConfigs } from '../../src/config/sweep.js';
import { ConfigError, TokenloadError } from '../../src/errors.js';

const base = { models: ['m'] } satisfies ProfileConfigInput;
const bailian = { ...base, inputFile: 'trace.jsonl', customDatasetType: 'bailian_trace' } as const;

function assertConfigError(fn: () => unknown, option: string, message: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ConfigError, String(err));
    assert.ok(err instanceof TokenloadError);
    assert.equal(err.code, 'E_CONFIG');
    assert.equal(err.exitCode, 2);
    assert.equal(err.option, option);
    assert.match(err.message, message);
    return true;
  });
}

const RULES: Array<[string, ProfileConfigInput, string, RegExp]> = [
  [
    '--input-file needs --custom-dataset-type',
    { ...base, inputFile: 'x' },
    '--custom-dataset-type',
    /required with --input-file/,
  ],
  [
    '--custom-dataset-type needs --input-file',
    { ...base, customDatasetType: 'bailian_trace' },
    '--custom-dataset-type',
    /needs --input-file/,
  ],
  [
    'offsets need a fixed schedule',
    { ...bailian, fixedSchedule: false, fixedScheduleStartOffsetMs: 5 },
    '--fixed-schedule-start-offset',
    /require a fixed schedule/,
  ],
  [
    'end offset before start offset',
    { ...bailian, fixedScheduleStartOffsetMs: 10, fixedScheduleEndOffsetMs: 5 },
    '--fixed-schedule-end-offset',
    /\(5\) must be >= .*\(10\)/,
  ],
  [
    'a fixed schedule needs an input file',
    { ...base, fixedSchedule: true },
    '--fixed-schedule',
    /needs a timestamped --input-file/,
  ],
  [
    'no request rate on a fixed schedule',
    { ...bailian, requestRate: 5 },
    '--request-rate',
    /cannot be combined with a fixed schedule/,
  ],
  [
    'no sampling strategy on a fixed schedule',
    { ...bailian, datasetSamplingStrategy: 'random' },
    '--dataset-sampling-strategy',
    /not allowed with a fixed schedule/,
  ],
  [
    'no rate ramp on a fixed schedule',
    { ...bailian, requestRateRampSeconds: 1 },
    '--request-rate-ramp-duration',
    /not allowed with a fixed schedule/,
  ],
  [
    'smoothness needs gamma',
    { ...base, requestRate: 5, arrivalPattern: 'poisson', arrivalSmoothness: 2 },
    '--arrival-smoothness',
    /requires --arrival-pattern gamma/,
  ],
  [
    'an arrival pattern needs a rate',
    { ...base, arrivalPattern: 'constant' },
    '--arrival-pattern',
    /requires --request-rate/,
  ],
  [
    'a rate ramp needs a rate',
    { ...base, requestRateRampSeconds: 2 },
    '--request-rate-ramp-duration',
    /requires --request-rate/,
  ],
  [
    'a session count does not fit a trace replay',
    { ...base, inputFile: 't.jsonl', customDatasetType: 'mooncake_trace', conversationNum: 3 },
    '--conversation-num',
    /cannot be combined with a fixed schedule/,
  ],
  [
    'a cancellation delay needs a rate',
    { ...base, requestCancellationDelaySeconds: 1 },
    '--request-cancellation-delay',
    /requires --request-cancellation-rate/,
  ],
  [
    'goodput names an unknown metric',
    { ...base, goodput: 'time_to_frist_token:300' },
    '--goodput',
    /time_to_frist_token/,
  ],
  [
    'a speedup ratio without a replay on timestamps (synthetic data) would change nothing',
    { ...base, synthesisSpeedupRatio: 2 },
    '--synthesis-speedup-ratio',
    /divides trace timestamps, so it needs a replay on them/,
  ],
  [
    'a speedup ratio on a trace replayed without its timestamps',
    {
      ...base,
      inputFile: 'trace.jsonl',
      customDatasetType: 'bailian_trace',
      fixedSchedule: false,
      synthesisSpeedupRatio: 2,
    },
    '--synthesis-speedup-ratio',
    /--no-fixed-schedule/,
  ],
  [
    'simulator options need --simulator',
    { ...base, simulatorOptions: { ttftMs: 5 } },
    '--simulator-option',
    /needs --simulator/,
  ],
  [
    'an unknown simulator option',
    { ...base, simulator: true, simulatorOptions: { bogusThing: 1 } },
    '--simulator-option',
    /bogus-thing: unknown simulator parameter/,
  ],
  [
    'a bad simulator option value',
    { ...base, simulator: true, simulatorOptions: { faultRate429: 2 } },
    '--simulator-option',
    /--simulator-option fault-rate-429: expected a number <= 1, got 2/,
  ],
  [
    'trace synthesis needs a Bailian or Mooncake trace',
    {
      ...base,
      inputFile: 'x',
      customDatasetType: 'single_turn',
      synthesisPrefixLenMultiplier: 2,
      synthesisMaxOsl: 10,
    },
    '--synthesis-prefix-len-multiplier',
    /^--synthesis-prefix-len-multiplier, --synthesis-max-osl apply to a --custom-dataset-type bailian_trace or mooncake_trace --input-file only \(not single_turn\)\.$/,
  ],
  [
    'trace synthesis needs an input file',
    { ...base, synthesisPromptLenMultiplier: 0.5 },
    '--synthesis-prefix-len-multiplier',
    /^--synthesis-prompt-len-multiplier applies to a --custom-dataset-type bailian_trace or mooncake_trace --input-file only\.$/,
  ],
];

for (const [name, input, option, message] of RULES) {
  test(`rule: ${name}`, () => {
    assertConfigError(() => profileConfig(input), option, message);
    assert.equal(ProfileConfigSchema.safeParse(input).success, false);
  });
}

test('rule: sweep one list only, and no sweep on a fixed schedule', () => {
  assertConfigError(
    () => profileConfigs({ ...base, concurrency: [1, 2], requestRate: [1, 2] } as SweepInput),
    '--concurrency',
    /not both/,
  );
  assertConfigError(
    () => profileConfigs({ ...bailian, concurrency: [1, 2] }),
    '--concurrency',
    /fixed schedule/,
  );
});

test('a bad value names the option and what was expected', () => {
  assertConfigError(
    () => profileConfig({ ...base, requestRate: -1 }),
    '--request-rate',
    /^--request-rate: expected a number > 0, got -1$/,
  );
  assertConfigError(
    () => profileConfig({ ...base, concurrency: 1.5 }),
    '--concurrency',
    /expected an integer, got 1.5/,
  );
  assertConfigError(
    () => profileConfig({ ...base, url: 'ftp://x' }),
    '--url',
    /only http:\/\/ and https:\/\//,
  );
  assertConfigError(
    () => profileConfig({ ...base, url: ['http://a:1', 'a:1/'] }),
    '--url',
    /^--url: http:\/\/a:1 is listed twice\.$/,
  );
  assertConfigError(
    () => profileConfig({ ...base, endpointType: 'chatt' as 'chat' }),
    '--endpoint-type',
    /expected one of chat, /,
  );
  assertConfigError(
    () => profileConfig({ ...base, synthetic: { isl: 0 } }),
    '--isl',
    /expected a number >= 1, got 0/,
  );
  assertConfigError(() => profileConfig({} as ProfileConfigInput), '--model', /is required/);
  assertConfigError(
    () => profileConfig({ ...base, requestRat: 3 } as ProfileConfigInput),
    'requestRat',
    /unknown option/,
  );
});

test('defaults that depend on other fields resolve as the CLI resolves them', () => {
  const c = profileConfig({ ...bailian, fixedScheduleStartOffsetMs: 100, ui: 'dashboard' });
  assert.equal(c.fixedSchedule, true, 'a timestamped trace implies a fixed schedule');
  assert.equal(c.fixedScheduleAutoOffset, false, 'a start offset turns auto-offset off');
  assert.equal(c.ui, 'simple');
  assert.equal(c.artifactDir, join('artifacts', 'm-openai-chat-fixed_schedule'));
  assert.deepEqual(c.url, ['http://localhost:8000']);
  assert.ok(Number.isSafeInteger(c.randomSeed));
  assert.equal(profileConfig({ ...bailian, fixedSchedule: false }).fixedSchedule, false);
  const cancel = profileConfig({ ...base, requestCancellationRatePct: 10 });
  assert.equal(cancel.requestCancellationDelaySeconds, 0);
  assert.deepEqual(profileConfig({ ...base, url: 'host:9000/v1/' }).url, ['http://host:9000/v1']);
  assert.deepEqual(
    profileConfig({ ...base, url: ['a:1,https://b:2/v1', 'c:3'] }).url,
    ['http://a:1', 'https://b:2/v1', 'http://c:3'],
    'a list of URLs, each item possibly a comma list, in order',
  );
  assert.equal(profileConfig({ ...base, endpointPath: 'v1/x' }).endpointPath, '/v1/x');
  assert.equal(
    profileConfig({ ...bailian, synthetic: { isl: 5 } }).synthetic,
    undefined,
    'synthetic options need no input file',
  );
  assert.deepEqual(profileConfig(c), c, 'a resolved configuration parses to itself');
});

test('a sweep gives one configuration per value under <dir>/<parameter>_<value>', () => {
  const configs = profileConfigs({ ...base, requestRate: [10, 20], artifactDir: 'out' });
  assert.deepEqual(
    configs.map((c) => [c.requestRate, c.artifactDir]),
    [
      [10, join('out', 'request_rate_10')],
      [20, join('out', 'request_rate_20')],
    ],
  );
  assert.equal(
    profileConfigs({ ...base, concurrency: [2, 4] })[1]?.artifactDir,
    join('artifacts', 'm-openai-chat-concurrency_sweep', 'concurrency_4'),
  );
});

test('--prewarm-connections takes a whole number >= 0 or auto, and says so', () => {
  assert.equal(profileConfig({ ...base, prewarmConnections: 'auto' }).prewarmConnections, 'auto');
  assert.equal(profileConfig({ ...base, prewarmConnections: 0 }).prewarmConnections, 0);
  for (const bad of [1.5, 'abc'])
    assertConfigError(
      () => profileConfig({ ...base, prewarmConnections: bad as never }),
      '--prewarm-connections',
      /whole number >= 0 or auto/,
    );
});
