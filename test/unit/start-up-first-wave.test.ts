/**
 * The start-up split's first wave (the requests sent before the first answer) and the note of a slow
 * one: records on a virtual clock, through `StartUpSplit` and `slowFirstWaveNote`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type StartUpSection,
  StartUpSplit,
  slowFirstWaveNote,
  startUpLine,
} from '../../src/metrics/start-up.js';
import { sampleRecord } from '../helpers/sample-record.js';

const MS = 1e6;

/** A record begun at `startMs` (also its schedule) answered with `ttftMs` (absent: not streamed). */
function record(startMs: number, latencyMs: number, ttftMs?: number) {
  const r = sampleRecord({ startNs: startMs * MS, scheduledNs: startMs * MS });
  r.metrics = {
    request_latency: latencyMs,
    ...(ttftMs === undefined ? {} : { time_to_first_token: ttftMs }),
  };
  return r;
}

/** Four requests at 0–3 ms answered after `waveMs`, then ones every 50 ms answered after `restMs`. */
function split(waveMs: number, restMs: number, streamed = true): StartUpSection {
  const s = new StartUpSplit(0);
  for (let i = 0; i < 4; i++) s.add(record(i, waveMs + 10, streamed ? waveMs : undefined));
  for (let at = waveMs + 20; at < 4000; at += 50)
    s.add(record(at, restMs + 10, streamed ? restMs : undefined));
  const section = s.build();
  assert.ok(section !== null);
  return section;
}

test('the first wave is the requests begun before the first answer', () => {
  const section = split(1500, 10);
  assert.equal(section.first_wave?.requests, 4);
  assert.equal(section.first_wave?.time_to_first_token_ms?.p50, 1500);
  assert.match(
    startUpLine(section),
    /; first wave: 4 requests before the first answer, TTFT p50 1500 \/ max 1500 ms$/,
  );
});

test('a slow first wave without a warm-up gets a note naming --warmup-request-count; with one, none', () => {
  const section = split(1500, 10);
  assert.match(
    slowFirstWaveNote(section, false) ?? '',
    /^the first wave \(4 requests sent before the first answer\) had TTFT p50 1500 ms, 150\.0 times the p50 after the first 2 s \(10 ms\).*--warmup-request-count N/,
  );
  assert.equal(slowFirstWaveNote(section, true), null);
});

test('no note when the first wave is not both 3 times slower and 250 ms slower', () => {
  assert.equal(slowFirstWaveNote(split(200, 50), false), null, '4 times, but 150 ms');
  assert.equal(slowFirstWaveNote(split(1000, 400), false), null, '600 ms, but 2.5 times');
  assert.notEqual(slowFirstWaveNote(split(300, 50), false), null, '6 times and 250 ms');
});

test('a run that does not stream compares request latency', () => {
  const section = split(1500, 10, false);
  assert.equal(section.first_wave?.time_to_first_token_ms, undefined);
  assert.match(
    startUpLine(section),
    /first wave: 4 requests before the first answer, latency p50 1510 \/ max 1510 ms$/,
  );
  assert.match(slowFirstWaveNote(section, false) ?? '', /had request latency p50 1510 ms/);
});

test('a run shorter than the window has no note (nothing after it to compare)', () => {
  const s = new StartUpSplit(0);
  for (let i = 0; i < 4; i++) s.add(record(i, 1510, 1500));
  const section = s.build();
  assert.ok(section !== null && section.rest === null);
  assert.equal(section.first_wave?.requests, 4);
  assert.equal(slowFirstWaveNote(section, false), null);
});
