/**
 * tokenload against a server that keeps its own books: starts the stub server of
 * bench/side-by-side-stub.ts in a child process (16 streamed tokens, TTFT 20 ms, ITL 5 ms by
 * default), runs tokenload's real CLI against it in another child process, then joins the client's
 * `profile_export.jsonl` with the stub's per-request log by `x-request-id` and prints one JSON
 * object: the rate at which requests reached the server, how late they reached it against the
 * schedule and what the client added to TTFT, each for the first `--head-seconds` of the schedule
 * and for the rest, beside tokenload's own `schedule_lag`, and both processes' CPU per request.
 * Definitions: bench/side-by-side-join.ts.
 *
 *   npm run bench:side-by-side -- [--request-rate 1000] [--request-count 10000] [--arrival-pattern constant]
 *     [--tokens 16] [--ttft-ms 20] [--itl-ms 5] [--isl 100] [--head-seconds 2]
 *     [--stub-warmup-ms 1000] [--stub-backlog 65535]
 *     [--fixed-schedule | --trace FILE [--trace-type bailian_trace]] [--pin auto|none|C,S] [--cli built|tsx]
 *     [--client tokenload|reference] [-- <more tokenload profile flags>]
 *
 * The stub serves itself for `--stub-warmup-ms` before the client starts (a real server is warm) and
 * listens with `--stub-backlog` (default 65535, capped by the kernel's net.core.somaxconn).
 * `--client reference` runs bench/side-by-side-reference.ts instead of tokenload (default
 * `--request-count 3000`): the floor this machine and stub allow a minimal client with pre-opened
 * connections. `--fixed-schedule` replays a generated Bailian trace of `--request-count` rows
 * `1/rate` s apart with `--fixed-schedule` instead of `--request-rate`; `--trace` replays your own.
 * `--pin auto` (default) runs the client on CPU 0 and the stub on the last CPU with `taskset` when
 * it exists and there are two or more CPUs; `C,S` names the two CPUs; `none` does not pin.
 * `--cli built` (default) runs `node bin/tokenload.js` (run `npm run build` first: a dist older
 * than src is refused); `--cli tsx` runs the sources through tsx.
 *
 * Clocks: both children load bench/side-by-side-probe.mjs, which records each process's offset
 * between tokenload's epoch-ns mapping (`TimeBase`) and the machine-wide monotonic clock; the stub's
 * stamps are shifted by the difference before the join (reported as `clock.stubMinusClientUs`;
 * what remains is the probe's read gap, well under a microsecond). CPU is read from /proc every
 * 50 ms and taken over the window the server was busy with the run (first request received → last
 * token written), so start-up, the client warm-up and the final report are left out.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TimeBase } from '../src/timing/clock.js';
import { arg, machine, procCpuSeconds, r3 } from './common.js';
import {
  joinRun,
  readRecords,
  readStubLog,
  type SideBySideJoin,
  serverWindowNs,
} from './side-by-side-join.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const PROBE = join(ROOT, 'bench', 'side-by-side-probe.mjs');

/** Everything the command line sets. */
interface Options {
  rate: number;
  count: number;
  pattern: string;
  tokens: number;
  ttftMs: number;
  itlMs: number;
  isl: number;
  headSeconds: number;
  stubWarmupMs: number;
  stubBacklog: string;
  fixedSchedule: boolean;
  trace: string;
  traceType: string;
  pin: string;
  cli: string;
  client: string;
  extra: string[];
}

function options(): Options {
  const dashDash = process.argv.indexOf('--', 2);
  const client = arg('client', 'tokenload');
  if (client !== 'tokenload' && client !== 'reference')
    throw new Error(`--client: tokenload or reference, got ${client}`);
  return {
    rate: Number(arg('request-rate', '1000')),
    count: Number(arg('request-count', client === 'reference' ? '3000' : '10000')),
    pattern: arg('arrival-pattern', 'constant'),
    tokens: Number(arg('tokens', '16')),
    ttftMs: Number(arg('ttft-ms', '20')),
    itlMs: Number(arg('itl-ms', '5')),
    isl: Number(arg('isl', '100')),
    headSeconds: Number(arg('head-seconds', '2')),
    stubWarmupMs: Number(arg('stub-warmup-ms', '1000')),
    stubBacklog: arg('stub-backlog', '65535'),
    fixedSchedule: process.argv.includes('--fixed-schedule'),
    trace: arg('trace', ''),
    traceType: arg('trace-type', 'bailian_trace'),
    pin: arg('pin', 'auto'),
    cli: arg('cli', 'built'),
    client,
    extra: dashDash < 0 ? [] : process.argv.slice(dashDash + 1),
  };
}

/** [client CPU, stub CPU] for `taskset -c`, or null when not pinning. */
function pinning(pin: string): [string, string] | null {
  if (pin === 'none') return null;
  if (pin !== 'auto') {
    const [c, s] = pin.split(',');
    if (c === undefined || s === undefined) throw new Error(`--pin: expected auto, none or C,S; got ${pin}`);
    return [c, s];
  }
  const hasTaskset = spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0;
  return hasTaskset && cpus().length >= 2 ? ['0', String(cpus().length - 1)] : null;
}

/** Command and arguments, under `taskset -c cpu` when `cpu` is given. */
function pinned(cpu: string | undefined, args: string[]): [string, string[]] {
  return cpu === undefined ? [process.execPath, args] : ['taskset', ['-c', cpu, process.execPath, ...args]];
}

/** Newest modification time under `dir` (recursive), ms. */
function newestMtimeMs(dir: string): number {
  let newest = 0;
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    newest = Math.max(newest, statSync(join(dir, name)).mtimeMs);
  }
  return newest;
}

/** Node arguments that run the tokenload CLI. @throws {Error} when the built CLI is missing or stale. */
function cliArgs(cli: string): string[] {
  if (cli === 'tsx')
    return ['--import', 'tsx', '--import', PROBE, join(ROOT, 'test', 'helpers', 'cli-entry.ts')];
  const built = join(ROOT, 'dist', 'src', 'cli', 'main.js');
  if (!existsSync(built) || statSync(built).mtimeMs < newestMtimeMs(join(ROOT, 'src'))) {
    throw new Error('dist/ is missing or older than src/: run `npm run build` first, or pass --cli tsx');
  }
  return ['--import', PROBE, join(ROOT, 'bin', 'tokenload.js')];
}

/** A Bailian trace of `count` one-turn rows `1/rate` s apart (distinct prompts). */
function writeTrace(dir: string, o: Options): string {
  const blocks = Math.ceil(o.isl / 16);
  const rows: string[] = [];
  for (let i = 0; i < o.count; i++) {
    const hashIds = Array.from({ length: blocks }, (_, b) => i * blocks + b);
    rows.push(
      JSON.stringify({
        chat_id: i,
        parent_chat_id: -1,
        timestamp: Math.round((i / o.rate) * 1e6) / 1e6,
        input_length: o.isl,
        output_length: o.tokens,
        type: 'text',
        turn: 1,
        hash_ids: hashIds,
      }),
    );
  }
  const file = join(dir, 'trace.jsonl');
  writeFileSync(file, `${rows.join('\n')}\n`);
  return file;
}

/** `tokenload profile` flags for the run. */
function profileArgs(o: Options, url: string, dir: string): string[] {
  const common = [
    'profile',
    '--url',
    url,
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--streaming',
    '--random-seed',
    '1',
    '--ui',
    'none',
  ];
  const out = ['--artifact-dir', join(dir, 'artifacts'), '--request-timeout-seconds', '60'];
  const trace = o.trace !== '' ? o.trace : o.fixedSchedule ? writeTrace(dir, o) : '';
  const load =
    trace === ''
      ? ['--isl', String(o.isl), '--osl', String(o.tokens), '--request-rate', String(o.rate)]
      : ['--input-file', trace, '--custom-dataset-type', o.traceType, '--fixed-schedule'];
  const count = trace === '' || o.fixedSchedule ? ['--request-count', String(o.count)] : [];
  const pattern = trace === '' ? ['--arrival-pattern', o.pattern] : [];
  return [...common, ...out, ...load, ...count, ...pattern, ...o.extra];
}

/** Resolves with the exit code once `child` has exited. */
function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** The stub child, its port, and its stdout lines. */
interface Stub {
  child: ChildProcess;
  port: number;
  lines: string[];
}

async function startStub(o: Options, dir: string, cpu: string | undefined): Promise<Stub> {
  const args = ['--import', 'tsx', '--import', PROBE, join(ROOT, 'bench', 'side-by-side-stub.ts')];
  const stubFlags = ['--log', join(dir, 'stub-log.jsonl'), '--tokens', String(o.tokens)];
  const timing = [
    '--ttft-ms',
    String(o.ttftMs),
    '--itl-ms',
    String(o.itlMs),
    '--prompt-tokens',
    String(o.isl),
  ];
  const [cmd, full] = pinned(cpu, [...args, ...stubFlags, ...timing]);
  const env = { ...process.env, SIDE_BY_SIDE_CLOCK_FILE: join(dir, 'clock-stub.json') };
  const child = spawn(cmd, full, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    let buffered = '';
    child.stdout?.on('data', (data: Buffer) => {
      buffered += data.toString();
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        if (lines.length === 1) resolve((JSON.parse(line) as { port: number }).port);
      }
    });
    child.once('exit', (code) => reject(new Error(`stub exited with code ${code} before listening`)));
  });
  return { child, port, lines };
}

/** One /proc CPU reading of both children, at a parent epoch-ns time. */
interface CpuSample {
  atNs: bigint;
  clientS: number;
  stubS: number;
}

/** Samples both processes' CPU every 50 ms until stopped; readings of an exited process are skipped. */
function sampleCpu(clientPid: number, stubPid: number): { samples: CpuSample[]; stop: () => void } {
  const base = new TimeBase();
  const samples: CpuSample[] = [];
  const take = (): void => {
    const clientS = procCpuSeconds(clientPid);
    if (clientS > 0)
      samples.push({
        atNs: base.toEpochNs(performance.now() * 1e6),
        clientS,
        stubS: procCpuSeconds(stubPid),
      });
  };
  take();
  const timer = setInterval(take, 50);
  return { samples, stop: () => clearInterval(timer) };
}

/** CPU seconds of `key` at `atNs`, interpolated between samples (clamped at the ends). */
function cpuAt(samples: CpuSample[], key: 'clientS' | 'stubS', atNs: bigint): number {
  const first = samples[0];
  if (first === undefined) return 0;
  let prev = first;
  for (const s of samples) {
    if (s.atNs >= atNs) {
      if (s === prev) return s[key];
      const f = Number(atNs - prev.atNs) / Number(s.atNs - prev.atNs);
      return prev[key] + f * (s[key] - prev[key]);
    }
    prev = s;
  }
  return prev[key];
}

/** CPU per request and per token of both processes over the server's busy window. */
function cpuFigures(
  samples: CpuSample[],
  join: SideBySideJoin,
  window: ReturnType<typeof serverWindowNs>,
  tokens: number,
) {
  const n = join.requests.stubRequests;
  if (window === null || n === 0) return null;
  const used = (key: 'clientS' | 'stubS'): number =>
    cpuAt(samples, key, window.lastNs) - cpuAt(samples, key, window.firstNs);
  const wallS = Number(window.lastNs - window.firstNs) / 1e9;
  const clientMs = used('clientS') * 1000;
  const stubMs = used('stubS') * 1000;
  return {
    windowSeconds: r3(wallS),
    clientCores: r3(clientMs / 1000 / wallS),
    clientMsPerRequest: r3(clientMs / n),
    clientUsPerToken: r3((clientMs * 1000) / (n * tokens)),
    stubCores: r3(stubMs / 1000 / wallS),
    stubMsPerRequest: r3(stubMs / n),
    clientWholeProcessSeconds: r3(samples[samples.length - 1]?.clientS),
    note: '/proc utime+stime (10 ms ticks) sampled every 50 ms, interpolated to the window; per token = per request / tokens, fixed per-request cost included',
  };
}

/** The kernel's count of connections dropped from a full accept queue (machine-wide); null when unreadable. */
function listenOverflows(): number | null {
  try {
    const lines = readFileSync('/proc/net/netstat', 'utf8').split('\n');
    const names = lines.find((l) => l.startsWith('TcpExt:'))?.split(' ') ?? [];
    const values = lines.filter((l) => l.startsWith('TcpExt:'))[1]?.split(' ') ?? [];
    const at = names.indexOf('ListenOverflows');
    return at < 0 ? null : Number(values[at]);
  } catch {
    return null;
  }
}

/** Offset (ns) written by the probe into `file`. @throws {Error} when the probe did not run. */
function probeOffset(file: string): { offsetNs: bigint; readGapNs: number } {
  const p = JSON.parse(readFileSync(file, 'utf8')) as { offsetNs: string; readGapNs: string };
  return { offsetNs: BigInt(p.offsetNs), readGapNs: Number(p.readGapNs) };
}

/** Arguments of the reference client (bench/side-by-side-reference.ts), sockets sized from rate × response time. */
function referenceArgs(o: Options, url: string, dir: string): string[] {
  const responseS = (o.ttftMs + o.tokens * o.itlMs) / 1000;
  const connections = Math.min(1000, Math.ceil(o.rate * responseS * 2) + 8);
  const script = join(ROOT, 'bench', 'side-by-side-reference.ts');
  const out = ['--out', join(dir, 'artifacts', 'profile_export.jsonl'), '--connections', String(connections)];
  const load = ['--request-rate', String(o.rate), '--request-count', String(o.count), '--isl', String(o.isl)];
  return ['--import', 'tsx', '--import', PROBE, script, '--url', url, ...out, ...load];
}

/** Runs the client to completion, sampling CPU; returns its exit code, output and CPU samples. */
async function runClient(o: Options, dir: string, stub: Stub, cpu: string | undefined) {
  const url = `http://127.0.0.1:${stub.port}`;
  const args =
    o.client === 'reference' ? referenceArgs(o, url, dir) : [...cliArgs(o.cli), ...profileArgs(o, url, dir)];
  const [cmd, full] = pinned(cpu, args);
  const env = { ...process.env, SIDE_BY_SIDE_CLOCK_FILE: join(dir, 'clock-client.json') };
  const child = spawn(cmd, full, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const cpuSampler = sampleCpu(child.pid as number, stub.child.pid as number);
  const code = await exited(child);
  cpuSampler.stop();
  const command = [cmd, ...full].join(' ').split(`${ROOT}/`).join('');
  return { code, output, samples: cpuSampler.samples, command };
}

/** The run's own `client_health` figures the targets read (verdict, CPU, loop delay, GC); null without a summary. */
function clientHealthOf(file: string) {
  if (!existsSync(file)) return null;
  const h = (JSON.parse(readFileSync(file, 'utf8')) as { client_health?: Record<string, unknown> })
    .client_health;
  if (h === undefined) return null;
  const { verdict, cpu_percent, event_loop_delay_ms, gc } = h;
  return { verdict, cpu_percent, event_loop_delay_ms, gc };
}

/** The figures the issue's targets name, p99 for the head window and the rest. */
function headline(j: SideBySideJoin, cpu: ReturnType<typeof cpuFigures>) {
  const p99 = (split: SideBySideJoin['ttftErrorMs']) => ({
    head: split?.head.p99 ?? null,
    rest: split?.rest.p99 ?? null,
  });
  return {
    achievedArrivalRatePerS: j.achievedArrivalRatePerS,
    arrivalLatenessP99Ms: p99(j.arrivalLatenessMs),
    ttftErrorP99Ms: p99(j.ttftErrorMs),
    firstTokenDeliveryP99Ms: p99(j.firstTokenDeliveryMs),
    scheduleLagP99Ms: p99(j.scheduleLagMs),
    clientMsPerRequest: cpu?.clientMsPerRequest ?? null,
  };
}

async function main(): Promise<void> {
  const o = options();
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-side-by-side-'));
  mkdirSync(join(dir, 'artifacts'));
  const cores = pinning(o.pin);
  const loadBefore = loadavg().map(r3);
  const overflowsBefore = listenOverflows();
  const stub = await startStub(o, dir, cores?.[1]);
  let client: Awaited<ReturnType<typeof runClient>>;
  try {
    client = await runClient(o, dir, stub, cores?.[0]);
  } finally {
    stub.child.kill('SIGTERM');
    await exited(stub.child);
  }
  const stubOffset = probeOffset(join(dir, 'clock-stub.json'));
  const clientOffset = probeOffset(join(dir, 'clock-client.json'));
  const shiftNs = stubOffset.offsetNs - clientOffset.offsetNs;
  const stubLog = readStubLog(join(dir, 'stub-log.jsonl'), shiftNs);
  const recordsFile = join(dir, 'artifacts', 'profile_export.jsonl');
  const records = existsSync(recordsFile) ? readRecords(recordsFile) : [];
  const joined = joinRun(records, stubLog, { headSeconds: o.headSeconds, stubTtftMs: o.ttftMs });
  const stubStats = JSON.parse(stub.lines[1] ?? '{}') as Record<string, unknown>;
  const cpu = cpuFigures(client.samples, joined, serverWindowNs(stubLog), o.tokens);
  const result = {
    benchmark: 'side-by-side',
    machine: {
      ...machine(),
      loadAverageBefore: loadBefore,
      loadAverageAfter: loadavg().map(r3),
      listenOverflowsDuringRun: overflowsBefore === null ? null : (listenOverflows() ?? 0) - overflowsBefore,
    },
    command: client.command,
    method:
      `stub server (child, ${cores === null ? 'not pinned' : `CPU ${cores[1]}`}): ${o.tokens} tokens, TTFT ${o.ttftMs} ms, ` +
      `ITL ${o.itlMs} ms, one write per token; ${o.client === 'reference' ? 'reference client (bench/side-by-side-reference.ts)' : 'tokenload CLI'} ` +
      `(child, ${cores === null ? 'not pinned' : `CPU ${cores[0]}`}); ` +
      'joined by x-request-id; lateness, TTFT error and rate from the server stamps (definitions: bench/side-by-side-join.ts)',
    headline: headline(joined, cpu),
    stub: {
      warmupMs: o.stubWarmupMs,
      backlog: Number(o.stubBacklog),
      loopDelayMs: stubStats.loopDelayMs ?? null,
      otherRequests: stubStats.otherRequests ?? null,
      connectionsAccepted: stubStats.connections ?? null,
    },
    clock: {
      stubMinusClientUs: r3(Number(shiftNs) / 1e3),
      probeReadGapNs: Math.max(stubOffset.readGapNs, clientOffset.readGapNs),
    },
    client: {
      exitCode: client.code,
      warnings: client.output.split('\n').filter((l) => /warn|saturated|busy/i.test(l)),
      warmUp: client.output.split('\n').find((l) => l.includes('client warm-up:')) ?? null,
      health: clientHealthOf(join(dir, 'artifacts', 'profile_export_aiperf.json')),
    },
    ...joined,
    cpu,
    dir,
  };
  console.log(JSON.stringify(result, null, 2));
}

await main();
