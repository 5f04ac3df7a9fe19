/**
 * `tokenload merge` at scale: writes `--records` (default 1,000,000) generated records across
 * `--shards` (default 4) shard folders in a temporary folder (never commit them), then merges them
 * in a child process and reports its wall time, the report's share of it, its CPU time and peak RSS
 * (`process.resourceUsage()`), beside the sizes written and the load average (1 min) around it.
 *
 * The records are made by the product's own record stage (`processRecord`, `formatRecordLine`) from
 * raw records shaped like a streamed Bailian replay: input and output lengths resampled from the
 * example rows (examples/traces/bailian_*.jsonl, OSL mean ~376 tokens: one content chunk per token,
 * so ~375 `inter_chunk_latency` values a line), TTFT growing with the prompt, ITL ~12 ms with
 * jitter, sessions of 1–4 turns, server usage with cached tokens, ideal cached tokens, 2 % of
 * requests failed (HTTP 500). `--osl-scale` shrinks the output lengths (and the lines) by a factor.
 * `inputs.json` holds one short body per session: its merge is a byte copy.
 *
 *   node --import tsx bench/merge.ts --records 1000000 --shards 4
 *
 * `--keep DIR` generates into DIR and leaves it there; a later run with the same `--keep DIR` merges
 * the shards already in it (their generation is not timed again). `--generate-only` (with `--keep`)
 * writes the shards and stops, so a later run times the merge alone.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatRecordLine } from '../src/export/jsonl-writer.js';
import { mergeShards } from '../src/merge/merge-run.js';
import { processRecord } from '../src/record/process.js';
import type { ContentChunk, RawRecord } from '../src/record/types.js';
import { TimeBase } from '../src/timing/clock.js';
import { arg, flag, machine } from './common.js';

const records = Number(arg('records', '1000000'));
const shardCount = Number(arg('shards', '4'));
const oslScale = Number(arg('osl-scale', '1'));
/** Mean request rate of the whole run, req/s: sets how long the generated run lasts. */
const ratePerS = Number(arg('rate', '200'));

/** mulberry32: a small seeded generator, floats in [0, 1). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ROWS = readdirSync('examples/traces')
  .filter((f) => f.startsWith('bailian_') && f.endsWith('.jsonl'))
  .flatMap((f) => readFileSync(join('examples/traces', f), 'utf8').trim().split('\n'))
  .map((l) => JSON.parse(l) as { input_length: number; output_length: number });

const PROCESS = { tokenizer: null, useServerTokenCount: false, streaming: true, perChunkUsage: false };

/** One raw record of session `session`, turn `turn`, starting at `startNs` (monotonic). */
function rawRecord(
  rand: () => number,
  session: string,
  turn: number,
  sessionNum: number,
  startNs: number,
): RawRecord {
  const row = ROWS[Math.floor(rand() * ROWS.length)] as (typeof ROWS)[number];
  const isl = row.input_length + turn * 200;
  const osl = Math.max(1, Math.round(row.output_length * oslScale));
  const failed = rand() < 0.02;
  const sentNs = startNs + 50_000 + rand() * 200_000;
  const ackNs = sentNs + 2e6 + rand() * 3e6;
  const chunks: ContentChunk[] = [];
  let at = sentNs + (20 + isl * 0.02) * 1e6 * (0.7 + rand() * 0.6);
  for (let i = 0; !failed && i < osl; i++) {
    chunks.push({ atNs: at, text: 'x', reasoning: '' });
    at += 12e6 * (0.6 + rand() * 0.8);
  }
  const cached = Math.floor((isl * rand()) / 16) * 16;
  return {
    conversationId: session,
    turnIndex: turn,
    sessionNum,
    xRequestId: `${session}-${turn}`,
    xCorrelationId: session,
    model: 'Qwen/Qwen3-0.6B',
    requestType: 'text',
    scheduledNs: startNs - rand() * 300_000,
    inputTokens: isl,
    requestedOutputTokens: osl,
    promptLayout: turn === 0 ? 'user×1' : `user×${turn + 1} assistant×${turn}`,
    sentPromptTokens: isl,
    serverUrl: 'http://10.0.0.2:8000',
    startNs,
    sentNs,
    connectionReused: true,
    connectDurationNs: null,
    ackNs,
    responseStreamed: failed ? null : true,
    chunks,
    streamEndNs: failed ? null : at,
    endNs: failed ? ackNs : at + 100_000,
    usage: failed
      ? null
      : {
          prompt_tokens: isl + 5 + 5 * turn,
          completion_tokens: osl,
          total_tokens: isl + osl,
          prompt_tokens_details: { cached_tokens: cached },
        },
    finishReason: failed ? null : 'length',
    httpStatus: failed ? 500 : 200,
    parseErrors: 0,
    error: failed
      ? { kind: 'http_status', code: 500, type: 'Internal Server Error', message: 'boom', failedAtNs: ackNs }
      : null,
    cancelled: false,
    idealCachedTokens: Math.min(cached + 16, isl),
  };
}

/** Writes shard `index`'s folder: `perShard` records, its summary and inputs. */
async function writeShard(dir: string, index: number, perShard: number, time: TimeBase): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const rand = random(1000 + index);
  const out = createWriteStream(join(dir, 'profile_export.jsonl'));
  const inputs = createWriteStream(join(dir, 'inputs.json'));
  inputs.write('{"data":[');
  const gapNs = (1e9 / ratePerS) * shardCount;
  let written = 0;
  for (let s = 0; written < perShard; s++) {
    const session = `shard${index}-session${s}`;
    const turns = Math.min(1 + Math.floor(rand() * 4), perShard - written);
    const body = `{"messages":[{"role":"user","content":"${session}"}],"model":"Qwen/Qwen3-0.6B","stream":true}`;
    inputs.write(
      `${s === 0 ? '' : ','}{"session_id":"${session}","payloads":[${Array(turns).fill(body).join(',')}]}`,
    );
    for (let t = 0; t < turns; t++, written++) {
      const startNs = written * gapNs + rand() * gapNs;
      const line = formatRecordLine(processRecord(rawRecord(rand, session, t, s, startNs), PROCESS), time);
      if (!out.write(line)) await once(out, 'drain');
    }
  }
  inputs.end(']}\n');
  out.end();
  await Promise.all([once(out, 'finish'), once(inputs, 'finish')]);
  const start = new Date(Number(time.toEpochNs(0) / 1_000_000n));
  const summary = {
    start_time: start.toISOString(),
    end_time: new Date(start.getTime() + (perShard * gapNs) / 1e6 + 60_000).toISOString(),
    was_cancelled: false,
    run_status: { status: 'completed', reason: null, exit_code: 0 },
    input_config: {
      endpointType: 'chat',
      streaming: true,
      useServerTokenCount: false,
      url: ['http://10.0.0.2:8000'],
      models: ['Qwen/Qwen3-0.6B'],
      goodput: 'time_to_first_token:500',
    },
    warnings: [],
    load: { strategy: 'fixed_schedule', description: 'generated records (bench/merge.ts)' },
    shard: {
      index,
      count: shardCount,
      start_at: null,
      start_at_ms: null,
      session_hash: 'bench',
      first_send_skew_ms: 0.2,
      clock: null,
      sessions: 0,
      requests: perShard,
      run_identity: { trace_sha256: null, trace_bytes: null, options_sha256: 'bench' },
    },
  };
  writeFileSync(join(dir, 'profile_export_aiperf.json'), JSON.stringify(summary));
}

function sizeMiB(file: string): number {
  return Math.round(statSync(file).size / 2 ** 20);
}

/** In the child: the merge itself, timed, with its peak RSS. */
async function child(out: string, dirs: string[]): Promise<void> {
  const t0 = performance.now();
  const outcome = await mergeShards({ shardDirs: dirs, artifactDir: out });
  const totalMs = performance.now() - t0;
  const reportMs = Number(/built in (\d+) ms/.exec(outcome.consoleText)?.[1] ?? Number.NaN);
  const usage = process.resourceUsage();
  const peakRssMiB = Math.round(usage.maxRSS / 1024);
  const cpuS = Math.round((usage.userCPUTime + usage.systemCPUTime) / 1e5) / 10;
  process.stdout.write(
    JSON.stringify({
      records: outcome.recordCount,
      totalMs: Math.round(totalMs),
      reportMs,
      cpuS,
      peakRssMiB,
      spillRuns: outcome.spill.runs,
      spillMiB: Math.round(outcome.spill.bytes / 2 ** 20),
    }),
  );
}

async function main(): Promise<void> {
  const keep = arg('keep', '');
  const root = keep === '' ? mkdtempSync(join(tmpdir(), 'tokenload-bench-merge-')) : keep;
  try {
    const dirs = Array.from({ length: shardCount }, (_, i) => join(root, `shard-${i}`));
    let generateMs: number | null = null;
    if (!existsSync(join(root, `shard-${shardCount - 1}`, 'profile_export_aiperf.json'))) {
      const time = new TimeBase();
      const t0 = performance.now();
      const perShard = Math.ceil(records / shardCount);
      await Promise.all(dirs.map((d, i) => writeShard(d, i, perShard, time)));
      generateMs = Math.round(performance.now() - t0);
    }
    if (flag('generate-only')) {
      process.stdout.write(`${JSON.stringify({ generated: root, generateMs })}\n`);
      return;
    }
    const out = join(root, 'merged');
    rmSync(out, { recursive: true, force: true });
    const loadBefore = loadavg()[0]?.toFixed(1);
    const proc = spawn(process.execPath, ['--import', 'tsx', 'bench/merge.ts', '--child', out, ...dirs], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let text = '';
    proc.stdout.on('data', (b: Buffer) => {
      text += b.toString('utf8');
    });
    const [code] = (await once(proc, 'exit')) as [number];
    if (code !== 0) throw new Error(`merge exited ${code}`);
    const inputMiB = dirs.reduce((sum, d) => sum + sizeMiB(join(d, 'profile_export.jsonl')), 0);
    process.stdout.write(
      `${JSON.stringify(
        {
          machine: machine(),
          method: `${records} generated records in ${shardCount} shard folders (osl-scale ${oslScale}), merged by mergeShards in a child process`,
          generateMs,
          loadAverage1m: `${loadBefore} → ${loadavg()[0]?.toFixed(1)}`,
          recordsMiB: inputMiB,
          bytesPerLine: Math.round((inputMiB * 2 ** 20) / records),
          reportMiB: sizeMiB(join(out, 'report.html')),
          merge: JSON.parse(text) as unknown,
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    rmSync(keep === '' ? root : join(root, 'merged'), { recursive: true, force: true });
  }
}

const childAt = process.argv.indexOf('--child');
if (childAt >= 0) await child(process.argv[childAt + 1] as string, process.argv.slice(childAt + 2));
else await main();
