/**
 * Where a benchmark's client CPU goes, from `perf record -e cpu-clock` (true CPU time per thread,
 * kernel included, sampled at 1,999 Hz) over a window of the run. V8's own `--cpu-prof` samples
 * wall time: a thread blocked in a syscall or a futex shows up as the JS function that made the
 * call, so it cannot tell CPU from waiting; perf can. JIT frames are named through the map file
 * Node writes with `--perf-basic-prof`, so start the benchmark as
 * `node --perf-basic-prof --import tsx bench/rate.ts … --perf-window FROM,TO` (that flag leaves
 * `/tmp/perf-<pid>.map` and an `isolate-*-v8.log` in the working directory; delete them after).
 *
 * Each sample is put in one category: first by its whole stack (GC, JIT compilation, kernel by
 * syscall), then by the owner of its innermost JavaScript frame (tokenload's receive path, undici,
 * Node's streams, record processing, request building, timing). Needs `perf` on the PATH and
 * `kernel.perf_event_paranoid` ≤ 2; on failure the breakdown is null with the reason.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const HZ = 1999;

/** Categories by a regular expression on the whole stack, checked in order. */
const STACK_RULES: ReadonlyArray<readonly [string, RegExp]> = [
  [
    'v8: garbage collection',
    /Scavenge|MarkCompact|ConcurrentMarking|Sweeper|IncrementalMarking|MarkingVisitor/,
  ],
  ['v8: JIT compilation', /compiler::|Compiler::|Maglev|OptimizingCompile|BytecodeGenerator/],
  ['kernel: socket reads', /ksys_read|sock_read_iter|tcp_recvmsg/],
  ['kernel: socket writes', /do_writev|sock_write_iter|tcp_sendmsg/],
  ['kernel: epoll', /do_epoll_wait|ep_poll/],
  ['kernel: futex (thread wake-ups)', /futex/],
  ['kernel: other', /kernel\.kallsyms/],
];

/** Categories by the innermost JavaScript frame, checked in order. */
const OWNER_RULES: ReadonlyArray<readonly [string, RegExp]> = [
  [
    'tokenload: receive (onData/onHeaders/onComplete, record builder, SSE, JSON scan)',
    /(onData|onHeaders|onComplete|onError) \S*src\/client\/undici-client|src\/client\/(record-builder|sse-decoder|response-headers)|src\/endpoint\/|src\/record\/(failure|raw-record)/,
  ],
  ['tokenload: send (exchange, headers, deadlines)', /src\/client\//],
  ['undici: pool pick (scan for a free connection)', /undici\/lib\/dispatcher\/pool\.js:99/],
  [
    'undici: receive (llhttp, request.onData, readMore)',
    /undici\/lib\/dispatcher\/client-h1\.js:([1-9][0-9]{1,2}):|wasm-function|undici\/lib\/core\/request\.js:(2[89][0-9]|3[0-4][0-9])/,
  ],
  ['undici: send (dispatch, request, writeH1)', /undici\//],
  ['node: socket read (onStreamRead, Readable)', /stream_base_commons:1[6-9][0-9]|streams\/readable/],
  ['node: other internals (events, buffers, timers, writes)', /node:/],
  ['tokenload: record processing, metrics, exports', /src\/(record|metrics|export|report)\//],
  ['tokenload: request building (sender, prompt)', /src\/(run\/sender|prompt|dataset)/],
  ['tokenload: timing (scheduler, clock, wake thread)', /src\/timing\//],
  ['tokenload: run (phase, progress)', /\/src\//],
];

/** One category's share of the sampled CPU. */
export interface BreakdownRow {
  thread: 'main' | 'other';
  category: string;
  cpuMs: number;
  usPerRequest: number;
  usPerChunk: number;
}

/** A perf recording of this process. */
export interface PerfRecording {
  /** Stops recording (idempotent). */
  end(): Promise<void>;
  /**
   * The recording's breakdown over `requests` and `chunks` (those of the recorded window); null
   * with `error` when perf failed. Call after {@link PerfRecording.end}; deletes the recording.
   */
  breakdown(requests: number, chunks: number): { rows: BreakdownRow[] | null; error?: string };
}

/** Starts `perf record` on this process (all threads); a missing perf shows in the breakdown. */
export function startPerf(): PerfRecording {
  const file = join(tmpdir(), `tokenload-perf-${process.pid}-${Date.now()}.data`);
  const args = ['record', '-e', 'cpu-clock', '-F', String(HZ), '-g', '-p', String(process.pid), '-o', file];
  let failed: string | undefined;
  const child: ChildProcess = spawn('perf', args, { stdio: 'ignore' });
  child.on('error', (err) => {
    failed = err.message;
  });
  const exited = new Promise((resolve) => child.once('close', resolve));
  return {
    end: async () => {
      if (failed !== undefined) return;
      if (child.exitCode === null) child.kill('SIGINT');
      await exited;
    },
    breakdown: (requests, chunks) => {
      if (failed !== undefined) return { rows: null, error: `perf: ${failed}` };
      try {
        const text = execFileSync('perf', ['script', '-i', file, '-F', 'tid,ip,sym,dso'], {
          encoding: 'utf8',
          maxBuffer: 1 << 30,
          stdio: ['ignore', 'pipe', 'ignore'],
        });
        return { rows: categorize(text, requests, chunks) };
      } catch (err) {
        return { rows: null, error: `perf script: ${(err as Error).message}` };
      } finally {
        rmSync(file, { force: true });
      }
    },
  };
}

/** Samples of `perf script -F tid,ip,sym,dso` output: thread id and frames, innermost first. */
function samplesOf(text: string): { tid: string; frames: string[] }[] {
  const out: { tid: string; frames: string[] }[] = [];
  for (const block of text.split('\n\n')) {
    const lines = block.split('\n').filter((l) => l.trim() !== '');
    const head = lines[0];
    if (head === undefined) continue;
    out.push({ tid: head.trim().split(/\s+/)[0] ?? '', frames: lines.slice(1).map((l) => l.trim()) });
  }
  return out;
}

function categoryOf(frames: readonly string[]): string {
  const stack = frames.join('\n');
  for (const [name, rule] of STACK_RULES) if (rule.test(stack)) return name;
  for (const frame of frames) {
    if (!frame.includes('JS:')) continue;
    for (const [name, rule] of OWNER_RULES) if (rule.test(frame)) return name;
  }
  return 'native, no JS frame (libuv, malloc, V8 builtins)';
}

/** CPU per category and thread (main = this process's main thread), per request and per chunk. */
export function categorize(text: string, requests: number, chunks: number): BreakdownRow[] {
  const msPerSample = 1000 / HZ;
  const counts = new Map<string, number>();
  for (const { tid, frames } of samplesOf(text)) {
    const key = `${tid === String(process.pid) ? 'main' : 'other'}\t${categoryOf(frames)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const r1 = (x: number): number => Math.round(x * 10) / 10;
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([key, n]) => {
      const [thread, category] = key.split('\t') as ['main' | 'other', string];
      const cpuMs = n * msPerSample;
      return {
        thread,
        category,
        cpuMs: Math.round(cpuMs),
        usPerRequest: r1((cpuMs * 1000) / Math.max(1, requests)),
        usPerChunk: Math.round(((cpuMs * 1000) / Math.max(1, chunks)) * 100) / 100,
      };
    });
}
