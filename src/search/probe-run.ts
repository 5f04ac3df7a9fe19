/**
 * One probe of a search: a full profile run ({@link runProfile}) at one load, in its own folder
 * `probe-NN/` of the search folder, then judged from the `profile_export_aiperf.json` it wrote.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProfileConfigInput } from '../config/fields.js';
import { SUMMARY_JSON_FILE_NAME } from '../export/index.js';
import { runProfile } from '../run/profile.js';
import type { RunEnv } from '../util/run-env.js';
import { type SearchSpec, SWEPT_DIM_PATH, SWEPT_FIELD, slaUnit } from './config.js';
import type { HistoryIteration } from './history-types.js';
import { judgeProbe } from './judge.js';
import type { ProbePhase } from './types.js';

/** A probe's folder name: `probe-01`, … `probe-99`, `probe-100`. */
export function probeFolder(index1: number): string {
  return `probe-${String(index1).padStart(2, '0')}`;
}

/** The profile input of a probe at `load`: the searched field set, one run, the search's seed, quiet. */
export function probeInput(
  base: ProfileConfigInput,
  spec: SearchSpec,
  at: { load: number; dir: string; seed: number; warm?: boolean },
): ProfileConfigInput {
  return {
    ...base,
    [SWEPT_FIELD[spec.searchOver]]: at.load,
    numProfileRuns: 1,
    randomSeed: at.seed,
    artifactDir: at.dir,
    ui: 'none',
    // The client's hot path was compiled by an earlier probe of this process: no warm-up again,
    // unless the user asked for one.
    ...(at.warm === true && base.clientWarmupMs === undefined ? { clientWarmupMs: 0 } : {}),
  } as ProfileConfigInput;
}

/** Where a probe sits in the search. */
export interface ProbeAt {
  iterationIdx: number;
  /** 1-based folder number. */
  folderNumber: number;
  load: number;
  trial: number;
  phase: ProbePhase;
  seed: number;
  /** An earlier probe ran in this process (its client warm-up compiled the hot path). */
  warm: boolean;
}

/** A finished probe: its history entry, and the bad-input error that ended its run early, if any. */
export interface ProbeResult {
  iteration: HistoryIteration;
  inputError: Error | null;
}

/**
 * Runs the probe `at` of the search of `spec` in `searchDir`, from the profile input `base`.
 * A probe the stop signal ended is `interrupted` (its exports written, not judged).
 * @throws whatever {@link runProfile} throws before the run measured anything.
 */
export async function runProbe(
  base: ProfileConfigInput,
  spec: SearchSpec,
  searchDir: string,
  at: ProbeAt,
  env: RunEnv,
): Promise<ProbeResult> {
  const folder = probeFolder(at.folderNumber);
  const dir = join(searchDir, folder);
  const started = new Date();
  const outcome = await runProfile(
    probeInput(base, spec, { load: at.load, dir, seed: at.seed, warm: at.warm }),
    env,
  );
  const summary = JSON.parse(await readFile(join(dir, SUMMARY_JSON_FILE_NAME), 'utf8')) as Record<
    string,
    unknown
  >;
  const judged = judgeProbe(
    { summary, slas: spec.slas, attainmentFraction: spec.attainmentFraction },
    slaUnit,
  );
  const interrupted = env.stopSignal.aborted;
  const iteration: HistoryIteration = {
    iteration_idx: at.iterationIdx,
    folder,
    variation_values: { [SWEPT_DIM_PATH[spec.searchOver]]: at.load },
    load: at.load,
    trial: at.trial,
    phase: at.phase,
    ...judged,
    ...(interrupted ? { status: 'interrupted' as const, feasible: null, first_breach: null } : {}),
    started_at: started.toISOString(),
    duration_s: (Date.now() - started.getTime()) / 1000,
  };
  return { iteration, inputError: outcome.inputError };
}
