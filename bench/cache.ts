/**
 * Prefix-cache benchmark: replays each trace against a spawned simulator (engine mode) twice, with
 * the prefix cache on (large KV pool) and off, and prints the simulator's measured prefix-hit ratio
 * (hit tokens / prompt tokens, scraped from its `/metrics`) beside the ideal ratio of the trace
 * (`idealPrefixHit`, infinite cache), plus TTFT p50 with the cache on and off.
 *
 *   npm run bench:cache                       # both Bailian samples and the Mooncake first 10 min
 *   npm run bench:cache -- --only bailian     # Bailian samples only
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProfileConfig } from '../src/config/resolve.js';
import { profileConfig } from '../src/config/schema.js';
import { idealPrefixHit } from '../src/dataset/prefix-analysis.js';
import { type DatasetTypeName, getDatasetLoader } from '../src/dataset/registry.js';
import type { StatsSummary } from '../src/metrics/summary.js';
import { runProfile } from '../src/run/profile.js';
import { spawnSimulator } from '../src/simulator/spawn.js';
import { arg, machine, r3 } from './common.js';

/** One trace to replay. */
interface TraceCase {
  name: string;
  file: string;
  type: DatasetTypeName;
  speedup: number;
  endOffsetMs?: number;
}

const CASES: TraceCase[] = [
  {
    name: 'bailian-stratified-24',
    file: 'examples/traces/bailian_traceA_stratified_head24.jsonl',
    type: 'bailian_trace',
    speedup: 1,
  },
  {
    name: 'bailian-multiturn-40',
    file: 'examples/traces/bailian_traceA_multiturn_head40.jsonl',
    type: 'bailian_trace',
    speedup: 1,
  },
  {
    name: 'mooncake-conversation-first-10min',
    file: 'examples/traces/mooncake_conversation_trace.jsonl',
    type: 'mooncake_trace',
    speedup: 10,
    endOffsetMs: 600_000,
  },
];

/** KV pool large enough that nothing a sample needs is evicted (16 M tokens at block size 16). */
const LARGE_CAPACITY_BLOCKS = 1_000_000;

function caseConfig(c: TraceCase, url: string, dir: string): ProfileConfig {
  return profileConfig({
    models: ['Qwen/Qwen3-0.6B'],
    url,
    streaming: true,
    inputFile: c.file,
    customDatasetType: c.type,
    fixedSchedule: true,
    ...(c.endOffsetMs === undefined ? {} : { fixedScheduleEndOffsetMs: c.endOffsetMs }),
    synthesisSpeedupRatio: c.speedup,
    randomSeed: 1,
    requestTimeoutSeconds: 3600,
    artifactDir: dir,
    commandLine: 'bench/cache.ts',
  });
}

/** Reads one unlabelled-or-labelled sample value of a Prometheus metric. */
function promValue(text: string, name: string): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) return value;
  }
  return Number.NaN;
}

/** Measured figures of one replay. */
interface RunFigures {
  requests: number;
  errors: number;
  promptTokens: number;
  hitTokens: number;
  hitRatio: number | null;
  ttftP50Ms: number | null;
  ttftP90Ms: number | null;
  wallSeconds: number | null;
}

async function replay(c: TraceCase, prefixCache: boolean): Promise<RunFigures> {
  const sim = await spawnSimulator({
    mode: 'engine',
    prefixCache,
    cacheCapacityBlocks: LARGE_CAPACITY_BLOCKS,
  });
  const t0 = performance.now();
  try {
    const dir = mkdtempSync(join(tmpdir(), `tokenload-cache-${c.name}-`));
    const outcome = await runProfile(caseConfig(c, sim.url, dir), {
      log: { info: () => undefined, warn: (m) => process.stderr.write(`warning: ${m}\n`) },
      stopSignal: new AbortController().signal,
    });
    const metrics = await (await fetch(`${sim.url}/metrics`)).text();
    const promptTokens = promValue(metrics, 'vllm:prompt_tokens_total');
    const hitTokens = promValue(metrics, 'vllm:prefix_cache_hits_total');
    const m = outcome.summary.metrics;
    const ttft = m.time_to_first_token as StatsSummary | undefined;
    return {
      requests: outcome.recordCount,
      errors: (m.error_request_count as { avg: number } | undefined)?.avg ?? 0,
      promptTokens,
      hitTokens,
      hitRatio: promptTokens > 0 ? r3(hitTokens / promptTokens) : null,
      ttftP50Ms: r3(ttft?.p50),
      ttftP90Ms: r3(ttft?.p90),
      wallSeconds: r3((performance.now() - t0) / 1000),
    };
  } finally {
    await sim.close();
  }
}

async function ideal(c: TraceCase): Promise<{ tokenHitRatio: number | null; blockHitRatio: number | null }> {
  const dataset = await getDatasetLoader(c.type).load(c.file, {
    speedupRatio: c.speedup,
    ...(c.endOffsetMs === undefined ? {} : { endOffsetMs: c.endOffsetMs }),
  });
  const stats = idealPrefixHit(dataset);
  return { tokenHitRatio: r3(stats.tokenHitRatio), blockHitRatio: r3(stats.blockHitRatio) };
}

const only = arg('only', 'all');
const selected = CASES.filter((c) => only === 'all' || c.name.startsWith(only));
const results: Record<string, unknown>[] = [];
for (const c of selected) {
  process.stderr.write(`[bench:cache] ${c.name}: cache on\n`);
  const on = await replay(c, true);
  process.stderr.write(`[bench:cache] ${c.name}: cache off\n`);
  const off = await replay(c, false);
  results.push({ trace: c.name, speedup: c.speedup, ideal: await ideal(c), cacheOn: on, cacheOff: off });
}
console.log(
  JSON.stringify(
    {
      benchmark: 'cache',
      machine: machine(),
      method:
        'fixed-schedule replay (streaming chat) against a spawned simulator in engine mode, once with ' +
        `prefixCache on (${LARGE_CAPACITY_BLOCKS} blocks of 16 tokens) and once off; hitRatio = ` +
        'vllm:prefix_cache_hits_total / vllm:prompt_tokens_total from the simulator /metrics after the run; ' +
        'ideal = idealPrefixHit over the loaded trace (infinite cache, arrival order); TTFT from the client summary',
      results,
    },
    null,
    2,
  ),
);
