/**
 * Start-up cost of a tokenload process: CPU (user + system) of each process a `tokenload profile
 * --simulator --request-count 1` run starts (the CLI and its simulator child, measured by each
 * process itself at exit through a `--import` hook passed in NODE_OPTIONS, so a fork inherits it),
 * and the time from the spawn to the first request sent (the smallest `request_start_ns` of
 * profile_export.jsonl against the spawn's epoch time). Runs the built CLI (`bin/tokenload.js`, as a
 * user's install does; run `npm run build` first), one process tree at a time, `--runs` times per
 * case, and prints the median, min and max of each figure, with the 1-minute load average at start
 * and end. Cases: `tokenload --version` (Node plus the CLI's modules), the run with its warm-ups off
 * (`--client-warmup-ms 0 --simulator-option warmup-ms=0`: modules, tokenizer, word list, one
 * request, the artifacts) and the run with the defaults (both warm-ups on).
 *
 *   npm run build && node --import tsx bench/startup.ts --runs 5
 *   node --import tsx bench/startup.ts --runs 5 --root /tmp/other-build   (another checkout's build)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { arg, machine } from './common.js';

const runs = Number(arg('runs', '5'));
const root = resolve(arg('root', join(import.meta.dirname, '..')));
const cli = join(root, 'bin', 'tokenload.js');
if (!existsSync(join(root, 'dist', 'src', 'cli', 'main.js')))
  throw new Error(`${root}: run npm run build first`);

/** Written by each process of the tree at exit: `<entry file name> <cpu seconds>`. */
const HOOK = `import { appendFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { basename } from 'node:path';
const out = process.env.TOKENLOAD_BENCH_CPU_OUT;
if (isMainThread && out) process.on('exit', () => {
  const u = process.cpuUsage();
  appendFileSync(out, basename(process.argv[1] ?? '?') + ' ' + (u.user + u.system) / 1e6 + '\\n');
});
`;

const WARMUPS_OFF = ['--client-warmup-ms', '0', '--simulator-option', 'warmup-ms=0'];
const CASES: Record<string, string[] | null> = {
  version: null,
  'profile, warm-ups off': WARMUPS_OFF,
  'profile, defaults': [],
};

interface Sample {
  cpuS: Record<string, number>;
  firstRequestMs: number | null;
}

function runOnce(dir: string, extra: string[] | null): Sample {
  const out = join(dir, `cpu-${Math.random().toString(36).slice(2)}`);
  const artifacts = join(dir, 'run');
  rmSync(artifacts, { recursive: true, force: true });
  const args =
    extra === null
      ? [cli, '--version']
      : [cli, 'profile', '--simulator', '-m', 'Qwen/Qwen3-0.6B', '--tokenizer', 'builtin'].concat(
          ['--request-count', '1', '--ui', 'none', '--artifact-dir', artifacts],
          extra,
        );
  const env = {
    ...process.env,
    NODE_OPTIONS: `--import=${join(dir, 'hook.mjs')}`,
    TOKENLOAD_BENCH_CPU_OUT: out,
  };
  const spawnedNs = BigInt(Date.now()) * 1_000_000n;
  const done = spawnSync(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  if (done.status !== 0) throw new Error(`exit ${done.status}: ${done.stderr.toString().slice(-2000)}`);
  const cpuS: Record<string, number> = {};
  for (const line of readFileSync(out, 'utf8').trim().split('\n')) {
    const [name, s] = line.split(' ') as [string, string];
    const key = name === 'tokenload.js' ? 'cli' : name === 'child.js' ? 'simulator' : name;
    cpuS[key] = (cpuS[key] ?? 0) + Number(s);
  }
  return { cpuS, firstRequestMs: extra === null ? null : firstRequestMs(artifacts, spawnedNs) };
}

function firstRequestMs(artifacts: string, spawnedNs: bigint): number {
  const lines = readFileSync(join(artifacts, 'profile_export.jsonl'), 'utf8').trim().split('\n');
  let first: bigint | null = null;
  for (const line of lines) {
    const m = /"request_start_ns":(\d+)/.exec(line);
    if (m?.[1] !== undefined && (first === null || BigInt(m[1]) < first)) first = BigInt(m[1]);
  }
  if (first === null) throw new Error('no request_start_ns in profile_export.jsonl');
  return Number(first - spawnedNs) / 1e6;
}

function stats(values: number[], digits: number): { median: number; min: number; max: number } {
  const s = [...values].sort((a, b) => a - b);
  const round = (v: number): number => Number(v.toFixed(digits));
  return {
    median: round(s[Math.floor((s.length - 1) / 2)] ?? Number.NaN),
    min: round(s[0] ?? NaN),
    max: round(s.at(-1) ?? NaN),
  };
}

function summarize(samples: Sample[]): Record<string, unknown> {
  const keys = [...new Set(samples.flatMap((s) => Object.keys(s.cpuS)))];
  const cpu: Record<string, unknown> = {};
  for (const k of keys)
    cpu[k] = stats(
      samples.map((s) => s.cpuS[k] ?? 0),
      2,
    );
  cpu.total = stats(
    samples.map((s) => Object.values(s.cpuS).reduce((a, b) => a + b, 0)),
    2,
  );
  const first = samples.map((s) => s.firstRequestMs).filter((v) => v !== null);
  return { cpuS: cpu, ...(first.length > 0 ? { firstRequestMs: stats(first, 0) } : {}) };
}

const dir = mkdtempSync(join(tmpdir(), 'tokenload-startup-'));
try {
  writeFileSync(join(dir, 'hook.mjs'), HOOK);
  const loadStart = loadavg()[0];
  const results: Record<string, unknown> = {};
  for (const [name, extra] of Object.entries(CASES)) {
    const samples: Sample[] = [];
    for (let i = 0; i < runs; i++) samples.push(runOnce(dir, extra));
    results[name] = summarize(samples);
  }
  const out = {
    benchmark: 'startup',
    machine: machine(),
    build: `${basename(root)} (${cli})`,
    method: `${runs} runs per case, one process tree at a time; CPU per process measured by the process at exit (user + system), the CLI's worker threads included in 'cli'`,
    loadAverage1m: { start: loadStart, end: loadavg()[0] },
    results,
  };
  console.log(JSON.stringify(out, null, 2));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
