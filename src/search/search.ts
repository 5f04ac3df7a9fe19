/**
 * {@link runSearch}: `tokenload search` as a library call. The largest load (request rate,
 * concurrency, or the speedup of a fixed-schedule trace replay) that meets the SLOs, probed one full
 * profile run at a time (docs/search.md).
 */

import { defaultArtifactDir } from '../config/resolve.js';
import { profileConfig } from '../config/schema.js';
import type { SweepInput } from '../config/sweep.js';
import type { Logger } from '../util/run-env.js';
import { type SearchFlags, SWEPT_DIM_PATH, searchSpecOf } from './config.js';
import type { HistoryIteration, SearchHistory } from './history-types.js';
import { probeInput } from './probe-run.js';
import { runSearchLoop, type SearchResult, startHistory } from './run-search.js';
import { checkSearchInput } from './validate.js';

/** What {@link runSearch} takes. */
export interface RunSearchOptions {
  /** The search options, as `tokenload search` flags in camelCase (`searchOver`, `searchRange: '1,64'`, `searchSla: [...]`, `ttftSlaMs`, …). */
  search: SearchFlags;
  /**
   * The options of every probe, as `runProfile` takes them (a `--concurrency` / `--request-rate`
   * list refused; `numProfileRuns` is the trials per load). `artifactDir` is the search folder.
   */
  profile: SweepInput;
  /** Recorded in the history; default `tokenload search (library)`. */
  commandLine?: string;
  /** Progress lines; default none. */
  log?: Logger;
  /** Aborting stops the current probe (its exports written, status `interrupted`) and the search. */
  stopSignal?: AbortSignal;
  /** Aborting cancels a stopping probe's in-flight requests. */
  forceSignal?: AbortSignal;
  /** Hears each finished probe and the history as written after it. */
  onProbe?: (iteration: HistoryIteration, history: SearchHistory) => void;
}

const QUIET: Logger = { info: () => undefined, warn: () => undefined };

/** The search folder: `--resume`'s, `--artifact-dir`, else `artifacts/<model>-openai-<endpoint>-search_<swept>`. */
function searchDirOf(
  options: RunSearchOptions,
  resumeDir: string | null,
  first: ReturnType<typeof profileConfig>,
  swept: string,
): string {
  if (resumeDir !== null) return resumeDir;
  return (
    options.profile.artifactDir ?? defaultArtifactDir(first.models[0], first.endpointType, `search_${swept}`)
  );
}

/**
 * Runs a search: checks every option before anything is sent, then probes until the planner is
 * done, a probe is client-limited, or `stopSignal` aborts. Writes `search_history.json` (and one
 * `probe-NN/` per probe) in the search folder.
 * @returns the history, how the search ended (`done`, `client_limited`, `interrupted`,
 *   `input_error`) and the search folder.
 * @throws {ConfigError} for a bad search option (naming the flag), before anything is sent; what
 *   `runProfile` throws for a probe that could not start (unreachable server, bad input file).
 */
export async function runSearch(options: RunSearchOptions): Promise<SearchResult & { searchDir: string }> {
  const spec = searchSpecOf(options.search, {
    streaming: options.profile.streaming === true,
    trials: options.profile.numProfileRuns ?? 1,
  });
  const profile = checkSearchInput(options.profile, spec);
  const swept = SWEPT_DIM_PATH[spec.searchOver];
  const first = profileConfig(probeInput(profile, spec, { load: spec.lo, dir: '.', seed: 0 }));
  const searchDir = searchDirOf(options, spec.resumeDir, first, swept);
  const run = {
    spec,
    profile: { ...profile, artifactDir: searchDir },
    searchDir,
    commandLine: options.commandLine ?? 'tokenload search (library)',
    ...(options.onProbe === undefined ? {} : { onProbe: options.onProbe }),
  };
  const history = await startHistory(run);
  const result = await runSearchLoop(run, history, {
    log: options.log ?? QUIET,
    stopSignal: options.stopSignal ?? new AbortController().signal,
    ...(options.forceSignal === undefined ? {} : { forceSignal: options.forceSignal }),
  });
  return { ...result, searchDir };
}
