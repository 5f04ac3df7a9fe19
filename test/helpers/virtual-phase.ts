/**
 * Runs the profiling phase of a run exactly as `runProfile` does (its strategy from the registry,
 * sender, cancellation timers, duration cut-off, record file) on a {@link VirtualClock}, against a
 * fake server in which each request takes `durationMs(conversationId)` of virtual time unless its
 * cancel signal fires first. Returns the records file as a user reads it, with times in virtual ms
 * from the start of the phase's schedule.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PhaseClient } from '../../src/client/worker-factory.js';
import { planRun } from '../../src/config/plan.js';
import type { ProfileConfig } from '../../src/config/resolve.js';
import { profileConfig } from '../../src/config/schema.js';
import type { Conversation } from '../../src/dataset/types.js';
import { ENDPOINTS } from '../../src/endpoint/registry.js';
import { RECORDS_FILE_NAME } from '../../src/export/index.js';
import { PromptSynthesizer } from '../../src/prompt/synthesizer.js';
import { loadTokenizer, type TextTokenizer } from '../../src/prompt/tokenizer.js';
import type { RawRecord } from '../../src/record/types.js';
import type { RunContext } from '../../src/run/context.js';
import { type PhaseResult, runPhase } from '../../src/run/phase.js';
import { buildStrategy, profilingLimits } from '../../src/run/strategy-factory.js';
import { sharePlan } from '../../src/shard/shard-run.js';
import { TimeBase } from '../../src/timing/clock.js';
import { VirtualClock } from '../../src/timing/virtual-clock.js';

const MS = 1e6;

/** The built-in tokenizer, loaded once for every run of the file. */
let tokenizer: TextTokenizer | undefined;

/** One line of `profile_export.jsonl`, times in virtual ms from the start of the phase's schedule. */
export interface VirtualRecord {
  sessionNum: number;
  conversationId: string;
  startMs: number;
  endMs: number;
  wasCancelled: boolean;
}

/** Options of {@link virtualPhase}. */
export interface VirtualPhaseOptions {
  /** Flags of the run (models, seed, url, artifact folder and sampling have test defaults). */
  config: Partial<ProfileConfig>;
  conversations: Conversation[];
  /** Virtual time the fake server takes to answer a request of this conversation, ms. */
  durationMs: (conversationId: string) => number;
  /** Aborts the run's stop signal (a Ctrl-C) this many virtual ms after the start. */
  stopAtMs?: number;
}

/** Single-turn text conversations c0…c{n−1} (`question i`), sent with their history. */
export function textConversations(n: number): Conversation[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `c${i}`,
    contextMode: 'deltas_without_responses' as const,
    turns: [
      {
        index: 0,
        prompt: { kind: 'text' as const, text: `question ${i}` },
        source: { file: 'mem', line: i },
      },
    ],
  }));
}

/** Runs the phase; returns its result and its records, sorted by start time then session. */
export async function virtualPhase(
  options: VirtualPhaseOptions,
): Promise<{ result: PhaseResult; records: VirtualRecord[] }> {
  const clock = new VirtualClock(1000 * MS);
  const ctx = context(options, clock);
  const limits = profilingLimits(ctx.config, ctx.dataset);
  const strategy = buildStrategy(ctx.config, ctx.dataset, limits, 'profiling');
  const stop = new AbortController();
  if (options.stopAtMs !== undefined) clock.callAt(clock.nowNs() + options.stopAtMs * MS, () => stop.abort());
  const done = runPhase(
    { ...ctx, env: { ...ctx.env, stopSignal: stop.signal } },
    'profiling',
    strategy,
    limits,
  );
  await clock.runUntilIdle(done);
  const result = await done;
  return { result, records: readRecords(ctx.config.artifactDir, result.load.startNs) };
}

function context(options: VirtualPhaseOptions, clock: VirtualClock): RunContext {
  // A shard runs its share of the load, as runProfile gives it (shard/shard-run.ts).
  const config = sharePlan(
    planRun(
      profileConfig({
        models: ['virtual-model'],
        randomSeed: 5,
        url: 'http://127.0.0.1:9',
        artifactDir: mkdtempSync(join(tmpdir(), 'tokenload-virtual-phase-')),
        datasetSamplingStrategy: 'sequential',
        ...options.config,
      }),
    ),
  );
  tokenizer ??= loadTokenizer();
  const turnCount = options.conversations.reduce((n, c) => n + c.turns.length, 0);
  return {
    config,
    env: { log: { info: () => undefined, warn: () => undefined }, stopSignal: new AbortController().signal },
    dataset: {
      conversations: options.conversations,
      turnCount,
      blockSize: 16,
      skipped: { beforeStartOffset: 0, afterEndOffset: 0, badLines: 0 },
      file: 'memory',
    },
    tokenizer,
    synthesizer: PromptSynthesizer.create(tokenizer, config.randomSeed),
    adapter: ENDPOINTS.chat,
    targets: config.url,
    stream: null,
    clock,
    openClient: () => fakeServer(clock, options.durationMs),
    // No start-up probe: a run on a virtual clock is never late, and its schedule starts at once.
    measureFloor: async () => ({
      wake_floor_ms: { p50: 0, p99: 0, max: 0, count: 0 },
      idle_loop_delay_ms: { p50: 0, p99: 0, max: 0 },
    }),
  };
}

/** A client whose requests take virtual time; an aborted signal ends one at once as cancelled. */
function fakeServer(clock: VirtualClock, durationMs: (conversationId: string) => number): PhaseClient {
  return {
    send: async (request) => {
      const startNs = clock.nowNs();
      await clock.sleepUntil(startNs + durationMs(request.identity.conversationId) * MS, request.signal);
      const endNs = clock.nowNs();
      const cancelled = request.signal?.aborted === true;
      const record: RawRecord = {
        ...request.identity,
        startNs,
        sentNs: startNs,
        connectionReused: true,
        connectDurationNs: null,
        ackNs: cancelled ? null : endNs,
        responseStreamed: cancelled ? null : true,
        chunks: cancelled ? [] : [{ atNs: endNs, text: 'ok', reasoning: '' }],
        streamEndNs: cancelled ? null : endNs,
        endNs,
        usage: null,
        finishReason: cancelled ? null : 'stop',
        httpStatus: cancelled ? null : 200,
        parseErrors: 0,
        error: cancelled
          ? { kind: 'cancelled', code: 499, type: 'Cancelled', message: 'cancelled', failedAtNs: endNs }
          : null,
        cancelled,
      };
      return record;
    },
    close: () => Promise.resolve(),
  };
}

function readRecords(artifactDir: string, startNs: number): VirtualRecord[] {
  const zero = new TimeBase().toEpochNs(startNs);
  const ms = (epochNs: string): number => Number(BigInt(epochNs) - zero) / MS;
  const text = readFileSync(join(artifactDir, RECORDS_FILE_NAME), 'utf8').trim();
  if (text === '') return [];
  return text
    .split('\n')
    .map((line) => {
      const { metadata: m } = JSON.parse(line.replace(/"(\w+_ns)":(\d+)/g, '"$1":"$2"')) as {
        metadata: Record<string, string | number | boolean>;
      };
      return {
        sessionNum: m.session_num as number,
        conversationId: m.conversation_id as string,
        startMs: ms(m.request_start_ns as string),
        endMs: ms(m.request_end_ns as string),
        wasCancelled: m.was_cancelled as boolean,
      };
    })
    .sort((a, b) => a.startMs - b.startMs || a.sessionNum - b.sessionNum);
}
