/**
 * Shard folders for the merge tests, made from one ordinary run's artifact folder: its records and
 * inputs split by session, each part in a folder of its own with the run's summary plus the `shard`
 * section a sharded run (`--shard-index`/`--shard-count`, issue #16 item 1) writes.
 *
 * TEMPORARY: every write of a `shard` section (or of a shard's `run_status`) is in this one module.
 * Once sharded runs write their own section, the merge tests can run real shards instead and this
 * module can go.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const RECORDS = 'profile_export.jsonl';
const SUMMARY = 'profile_export_aiperf.json';
const INPUTS = 'inputs.json';

/** The `shard` section as the sharding contract of issue #16 defines it. */
export interface ShardSectionFixture {
  index: number;
  count: number;
  start_at: string | null;
  start_at_ms: number | null;
  session_hash: string;
  first_send_skew_ms: number | null;
  clock: { offset_ms: number; uncertainty_ms: number; basis: string; reference: string } | null;
  sessions: number;
  requests: number;
  run_identity: { trace_sha256: string | null; trace_bytes: number | null; options_sha256: string };
}

type Json = Record<string, unknown>;

function readJson(file: string): Json {
  return JSON.parse(readFileSync(file, 'utf8')) as Json;
}

/** The conversation id of a record line (its text holds no other `"conversation_id"` key before it). */
function conversationOf(line: string): string {
  const m = /"conversation_id":("(?:[^"\\]|\\.)*")/.exec(line);
  if (m === null) throw new Error(`no conversation_id in ${line.slice(0, 80)}`);
  return JSON.parse(m[1] as string) as string;
}

/** Index of the shard of session `id`: a stable hash (FNV-1a) mod `count`. */
export function shardOfSession(id: string, count: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193) >>> 0;
  return h % count;
}

/**
 * Splits run folder `runDir` into `count` shard folders `root/shard-<i>`: each gets the lines of
 * its sessions (in the run's order), their `inputs.json` entries, and the run's summary with a
 * `shard` section. Returns the folders, by index.
 */
export function splitRunIntoShards(runDir: string, count: number, root: string): string[] {
  const lines = readFileSync(join(runDir, RECORDS), 'utf8')
    .split('\n')
    .filter((l) => l !== '');
  const inputs = readJson(join(runDir, INPUTS)).data as Array<{ session_id: string }>;
  const summary = readJson(join(runDir, SUMMARY));
  const dirs: string[] = [];
  for (let index = 0; index < count; index++) {
    const dir = join(root, `shard-${index}`);
    mkdirSync(dir, { recursive: true });
    const mine = lines.filter((l) => shardOfSession(conversationOf(l), count) === index);
    writeFileSync(join(dir, RECORDS), mine.map((l) => `${l}\n`).join(''));
    const entries = inputs.filter((e) => shardOfSession(e.session_id, count) === index);
    writeFileSync(join(dir, INPUTS), `${JSON.stringify({ data: entries })}\n`);
    const sessions = new Set(mine.map(conversationOf)).size;
    const shard: ShardSectionFixture = {
      index,
      count,
      start_at: null,
      start_at_ms: null,
      session_hash: 'fnv1a-test',
      first_send_skew_ms: null,
      clock: null,
      sessions,
      requests: mine.length,
      run_identity: { trace_sha256: 'one-trace', trace_bytes: 1, options_sha256: 'one-run' },
    };
    writeFileSync(join(dir, SUMMARY), `${JSON.stringify({ ...summary, shard }, null, 2)}\n`);
    dirs.push(dir);
  }
  return dirs;
}

/** Changes the summary of shard folder `dir`: its `shard` section fields and, optionally, its `run_status`. */
export function patchShard(
  dir: string,
  patch: {
    shard?: Partial<ShardSectionFixture>;
    runStatus?: { status: string; reason: string | null; exit_code: number };
  },
): void {
  const file = join(dir, SUMMARY);
  const summary = readJson(file);
  if (patch.shard !== undefined) summary.shard = { ...(summary.shard as Json), ...patch.shard };
  if (patch.runStatus !== undefined) summary.run_status = patch.runStatus;
  writeFileSync(file, `${JSON.stringify(summary, null, 2)}\n`);
}
