import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { OutputError } from '../../src/errors.js';
import { InputsWriter } from '../../src/export/inputs-json.js';
import { formatRecordLine, RecordWriter, toRecordLine } from '../../src/export/jsonl-writer.js';
import { stringifyWithBigInt } from '../helpers/json-bigint.js';
import { SAMPLE_ORIGIN_NS, SAMPLE_TIME, sampleRecord } from '../helpers/sample-record.js';

const dir = mkdtempSync(join(tmpdir(), 'tokenload-export-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const ORIGIN = SAMPLE_ORIGIN_NS;
const time = SAMPLE_TIME;
const record = sampleRecord;

test('JSONL line: metadata, epoch ns as exact JSON integers, metrics with units, null error', () => {
  const text = formatRecordLine(record(), time);
  assert.ok(text.endsWith('}\n'));
  assert.equal(text.split('\n').length, 2); // one line
  // start = origin + 1e9 ns = 1,700,000,001,000,000,123
  const start = /"request_start_ns":(\d+)[,}]/.exec(text)?.[1];
  assert.equal(BigInt(start!), 1_700_000_001_000_000_123n);
  const end = /"request_end_ns":(\d+)[,}]/.exec(text)?.[1];
  assert.equal(BigInt(end!), ORIGIN + 1_300_000_001n);
  // origin + 999,000,000 = 1,700,000,000,999,000,123
  assert.match(text, /"request_scheduled_ns":1700000000999000123[,}]/);
  const line = JSON.parse(text);
  assert.deepEqual(Object.keys(line), ['metadata', 'metrics', 'error']);
  assert.equal(line.metadata.session_num, 7);
  assert.equal(line.metadata.benchmark_phase, 'profiling');
  assert.equal(line.metadata.request_type, 'text');
  assert.equal(line.metadata.was_cancelled, false);
  assert.deepEqual(line.metrics, {
    time_to_first_token: { value: 20, unit: 'ms' },
    inter_chunk_latency: { value: [1, 2], unit: 'ms' },
  });
  assert.equal(line.error, null);
});

test('JSONL line: error object with kind, null ack and schedule', () => {
  const error = {
    kind: 'timeout' as const,
    code: 408,
    type: 'TimeoutError',
    message: 'took too long',
    failedAtNs: 0,
  };
  const line = JSON.parse(formatRecordLine(record({ error, ackNs: null, scheduledNs: null }), time));
  assert.deepEqual(line.error, {
    code: 408,
    type: 'TimeoutError',
    message: 'took too long',
    kind: 'timeout',
  });
  assert.equal(line.metadata.request_ack_ns, null);
  assert.equal(line.metadata.request_scheduled_ns, null);
});

test('JSONL line is byte-identical to stringifyWithBigInt of the line object', () => {
  const metrics = {
    time_to_first_token: 20.123456789,
    inter_chunk_latency: [1, 2.5, 1e-7, 123456789.125],
    output_token_throughput_per_user: 1e21,
    schedule_lag: -0.25,
    request_latency: Number.NaN,
    input_sequence_length: 0,
    an_unknown_tag: Number.POSITIVE_INFINITY,
  };
  const r = { ...record(), metrics };
  assert.equal(formatRecordLine(r, time), `${stringifyWithBigInt(toRecordLine(r, time))}\n`);
});

test('stringifyWithBigInt leaves look-alike user strings alone', () => {
  const tricky = '\\u0000bigint:5';
  assert.equal(
    stringifyWithBigInt({ a: 12345678901234567890n, s: tricky }),
    `{"a":12345678901234567890,"s":${JSON.stringify(tricky)}}`,
  );
});

test('RecordWriter appends whole lines and survives backpressure', async () => {
  const path = join(dir, 'profile_export.jsonl');
  const writer = new RecordWriter(path, time);
  const n = 3000; // ~1 MB, far over the 16 KiB stream buffer, so 'drain' is awaited
  for (let i = 0; i < n; i++) await writer.write(record({ xRequestId: `req-${i}` }));
  await writer.close();
  await writer.close(); // idempotent
  const lines = readFileSync(path, 'utf8').split('\n');
  assert.equal(lines.pop(), ''); // file ends with a newline
  assert.equal(lines.length, n);
  assert.equal(JSON.parse(lines[n - 1]!).metadata.x_request_id, `req-${n - 1}`);
});

test('InputsWriter writes one entry per session, turns in order, from objects, JSON text or the UTF-8 bytes sent', async () => {
  const path = join(dir, 'inputs.json');
  const writer = new InputsWriter(path);
  await writer.add('s1', 0, { messages: [{ role: 'user', content: 'a' }] });
  await writer.add('s2', 0, { n: 3 });
  await writer.add('s1', 1, '{"pre":"serialized"}');
  // A cycled conversation sends its turns again: each is listed once, as first sent.
  await writer.add('s2', 0, { n: 4 });
  await writer.add('s2', 1, { n: 5 });
  await writer.close();
  assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), {
    data: [
      { session_id: 's1', payloads: [{ messages: [{ role: 'user', content: 'a' }] }, { pre: 'serialized' }] },
      { session_id: 's2', payloads: [{ n: 3 }, { n: 5 }] },
    ],
  });
  assert.equal(existsSync(`${path}.spool`), false);
  const mixedPath = join(dir, 'mixed-inputs.json');
  const mixed = new InputsWriter(mixedPath);
  const bytes = Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: ' näive' }] }));
  await mixed.add('s1', 0, bytes);
  // A body larger than the spool's read window, between small ones of other sessions.
  const large = Buffer.from(JSON.stringify({ text: ' word'.repeat(300_000) }));
  await mixed.add('s2', 0, large);
  await mixed.add('s1', 1, { n: 1 });
  await mixed.add('s3', 0, '{"k":2}');
  await mixed.add('s2', 1, '{"k":3}');
  await mixed.close();
  assert.deepEqual(JSON.parse(readFileSync(mixedPath, 'utf8')), {
    data: [
      {
        session_id: 's1',
        payloads: [{ model: 'm', messages: [{ role: 'user', content: ' näive' }] }, { n: 1 }],
      },
      { session_id: 's2', payloads: [{ text: ' word'.repeat(300_000) }, { k: 3 }] },
      { session_id: 's3', payloads: [{ k: 2 }] },
    ],
  });
  const emptyPath = join(dir, 'empty-inputs.json');
  const empty = new InputsWriter(emptyPath);
  await empty.close();
  assert.deepEqual(JSON.parse(readFileSync(emptyPath, 'utf8')), { data: [] });
});

test('writers report file errors instead of hanging: a file that cannot be created fails at once, naming --artifact-dir', () => {
  assert.throws(
    () => new RecordWriter(join(dir, 'missing-dir', 'x.jsonl'), time),
    (err: unknown) =>
      err instanceof OutputError && /^--artifact-dir: cannot write .*x\.jsonl \(ENOENT\)$/.test(err.message),
  );
});
