/**
 * The live progress of a streamed trace replay through the real CLI (the built one) against the
 * built-in simulator with injected 500s: the frames show rows read, sessions, done, in flight and
 * errors (never a made-up `0/1` total), and the final frame's counts are the summary's
 * (`request_count`, `error_request_count`, `replay.rows_read`, `replay.sessions`). Once with stderr
 * piped (plain `progress:` lines), once on a pseudo-terminal (`script`), where the cli-progress bar
 * draws its frames. A replay waiting through a 3 h gap says, on its progress line, when its next
 * request is due (interrupted with SIGINT once it has).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { builtCli } from '../helpers/built-package.js';

const ENTRY = builtCli();
const TRACE = 'examples/traces/bailian_traceA_multiturn_head40.jsonl';
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** No simulator or client warm-up (1 s and 0.5 s of CPU a run): the runs check counts, not timing. */
const NO_WARMUP = ['--simulator-option', 'warmup-ms=0', '--client-warmup-ms', '0'];

function profileArgs(artifactDir: string): string[] {
  return [
    'profile',
    '--simulator',
    ...NO_WARMUP,
    '-m',
    'Qwen/Qwen3-0.6B',
    '--streaming',
    '--input-file',
    TRACE,
    '--custom-dataset-type',
    'bailian_trace',
    '--fixed-schedule',
    '--synthesis-speedup-ratio',
    '60',
    '--simulator-option',
    'fault-rate-500=0.2',
    '--random-seed',
    '5',
    '--artifact-dir',
    artifactDir,
  ];
}

function run(command: string, args: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out })));
}

interface FinalFrame {
  rowsRead: number;
  sessions: number;
  done: number;
  ok: number;
  errors: number;
  inFlight: number;
}

const num = (text: string | undefined): number => Number((text ?? '').replaceAll(',', ''));

/** The counts of the last `finished:` frame in `text`. */
function finalFrame(text: string): FinalFrame {
  const all = [
    ...text.matchAll(
      /finished: rows read ([\d,]+) \| sessions ([\d,]+) \| done ([\d,]+) \| ok ([\d,]+) \| errors ([\d,]+) \| in flight ([\d,]+)/g,
    ),
  ];
  const m = all.at(-1);
  assert.ok(m !== undefined, `no final frame in:\n${text}`);
  return {
    rowsRead: num(m[1]),
    sessions: num(m[2]),
    done: num(m[3]),
    ok: num(m[4]),
    errors: num(m[5]),
    inFlight: num(m[6]),
  };
}

/** The frame's counts, as the summary of the same run states them. */
function summaryFrame(artifactDir: string): FinalFrame {
  const s = JSON.parse(readFileSync(join(artifactDir, 'profile_export_aiperf.json'), 'utf8'));
  const ok = s.request_count.avg as number;
  const errors = s.error_request_count.avg as number;
  return {
    rowsRead: s.replay.rows_read,
    sessions: s.replay.sessions,
    done: ok + errors,
    ok,
    errors,
    inFlight: 0,
  };
}

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-progress-'));
  dirs.push(dir);
  return join(dir, 'out');
}

test('stderr piped: the final progress line agrees with the summary', { timeout: 180_000 }, async () => {
  const out = freshDir();
  const { code, out: text } = await run(process.execPath, [ENTRY, ...profileArgs(out)]);
  assert.equal(code, 0, text);
  const frame = finalFrame(text);
  assert.deepEqual(frame, summaryFrame(out));
  assert.ok(frame.errors > 0, 'the injected 500s are counted');
  assert.match(text, /\[tokenload\] progress: finished: rows read 40 \| sessions 26 \|/);
});

/** Where cli-progress starts a frame: a carriage return, or the cursor moved to column 1 (ESC [1G). */
const FRAME_START = new RegExp(`\\r|${String.fromCharCode(27)}\\[1G`);

const noScript = spawnSync('script', ['--version']).status !== 0;

test('on a terminal: the bar shows rows read and sessions, not 0/1 (open), and ends on the summary counts', {
  skip: noScript ? 'script(1) (util-linux) is needed to give the CLI a pseudo-terminal' : false,
  timeout: 180_000,
}, async () => {
  const out = freshDir();
  const cli = [process.execPath, ENTRY, ...profileArgs(out)].join(' ');
  // script runs the command on a pseudo-terminal; the report (stdout) is dropped, the bar is on stderr.
  const { code, out: text } = await run('script', ['-qec', `${cli} > /dev/null`, '/dev/null']);
  assert.equal(code, 0, text);
  const frames = text.split(FRAME_START).filter((f) => f.startsWith(' rows read'));
  assert.ok(frames.length >= 2, `live frames drawn: ${frames.length}`);
  for (const f of frames.filter((x) => !x.includes('finished'))) {
    assert.match(f, /^ rows read [\d,]+ \| sessions [\d,]+ \| done [\d,]+ \| in flight \d+ \| errors \d+ \|/);
  }
  assert.doesNotMatch(text, /\(open\)|0\/1/);
  assert.deepEqual(finalFrame(text), summaryFrame(out));
});

test('a replay in a long quiet gap says when its next request is due, so it does not look hung', {
  timeout: 120_000,
}, async () => {
  const out = freshDir();
  mkdirSync(out, { recursive: true });
  // The second row 3 h 12 min 5 s after the first: a trace whose timestamps were read in the wrong unit looks like this.
  const trace = join(out, 'gap.jsonl');
  const rows = [0, 11_525_000].map((ts, i) => ({
    timestamp: ts,
    input_length: 16,
    output_length: 2,
    hash_ids: [i],
  }));
  writeFileSync(trace, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  const args = [
    ...['profile', '--simulator', ...NO_WARMUP, '-m', 'Qwen/Qwen3-0.6B', '--tokenizer', 'builtin'],
    '--streaming',
    ...['--input-file', trace, '--custom-dataset-type', 'mooncake_trace', '--artifact-dir', join(out, 'run')],
  ];
  const child = spawn(process.execPath, [ENTRY, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  // The first live line once both rows are read (the replay is then in its gap), whatever it says.
  const live = /progress: rows read 2 \|.*$/m;
  const due = /progress: .*\| next request due in 3 h 12 min \(trace time 3:12:05\)$/m;
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve) => {
    const read = (d: Buffer): void => {
      text += d.toString();
      if (live.test(text)) resolve();
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    void exited.then(() => resolve());
  });
  child.kill('SIGINT');
  await exited;
  assert.match(live.exec(text)?.[0] ?? '', due);
  assert.match(text, /progress: finished: rows read 2 \| sessions 2 \| done 1 \| ok 1 \|/);
});
