/**
 * AIPerf's trace-synthesis options beside `--synthesis-speedup-ratio` (in the Fixed schedule group):
 * prefix and prompt length multipliers, prefix-tree copies, output length multiplier, max ISL and
 * max OSL, with AIPerf's names and defaults; their cross-field rule; and the {@link TraceSynthesis}
 * they give a trace load. `tokenload synthesize-trace` and `analyze-trace` take the same fields.
 * What each does, row by row: dataset/trace-synthesis.ts.
 */
import { z } from 'zod';
import { isIdentitySynthesis } from '../dataset/trace-synthesis.js';
import type { TraceSynthesis } from '../dataset/types.js';
import { option } from '../util/option-meta.js';

/** A multiplier field's schema (a new one per field: option metadata is keyed by the schema). */
const multiplier = () => z.number().positive().default(1);

/** `--synthesis-*` options other than the speedup ratio. */
export const synthesisFields = {
  /** `--synthesis-prefix-len-multiplier`: a row's leading run of shared hash ids is stretched by x. */
  synthesisPrefixLenMultiplier: option(multiplier(), {
    flag: 'synthesis-prefix-len-multiplier',
    unit: 'x',
    help: "stretch each row's shared prefix (its leading hash_ids that other rows also have) by x; rows that shared it share the stretched one",
  }),
  /** `--synthesis-prefix-root-multiplier`: sessions spread over n disjoint copies of the prefix tree. */
  synthesisPrefixRootMultiplier: option(z.number().int().min(1).default(1), {
    flag: 'synthesis-prefix-root-multiplier',
    unit: 'n',
    help: 'spread sessions over n copies of the prefix tree with disjoint hash ids (a session stays in one)',
  }),
  /** `--synthesis-prompt-len-multiplier`: the part of a row past its shared prefix × x. */
  synthesisPromptLenMultiplier: option(multiplier(), {
    flag: 'synthesis-prompt-len-multiplier',
    unit: 'x',
    help: 'multiply the part of input_length past the shared prefix (hash_ids follow)',
  }),
  /** `--synthesis-output-len-multiplier`: `output_length` × x. */
  synthesisOutputLenMultiplier: option(multiplier(), {
    flag: 'synthesis-output-len-multiplier',
    unit: 'x',
    help: 'multiply output_length',
  }),
  /** `--synthesis-max-isl`: rows whose trace `input_length` exceeds n are dropped (and counted). */
  synthesisMaxIsl: option(z.number().int().min(1).optional(), {
    flag: 'synthesis-max-isl',
    unit: 'tokens',
    help: 'drop (and count) rows whose trace input_length exceeds this',
  }),
  /** `--synthesis-max-osl`: `output_length` capped at n after scaling (capped rows counted). */
  synthesisMaxOsl: option(z.number().int().min(1).optional(), {
    flag: 'synthesis-max-osl',
    unit: 'tokens',
    help: 'cap output_length at this (capped rows counted)',
  }),
};

/** The fields {@link synthesisOf} reads, as given or resolved. */
export type SynthesisFieldValues = {
  [K in keyof typeof synthesisFields]?: number | undefined;
};

/** The {@link TraceSynthesis} of the options, or undefined when every one is at AIPerf's default. */
export function synthesisOf(f: SynthesisFieldValues): TraceSynthesis | undefined {
  const s: TraceSynthesis = {
    prefixLenMultiplier: f.synthesisPrefixLenMultiplier ?? 1,
    prefixRootMultiplier: f.synthesisPrefixRootMultiplier ?? 1,
    promptLenMultiplier: f.synthesisPromptLenMultiplier ?? 1,
    outputLenMultiplier: f.synthesisOutputLenMultiplier ?? 1,
    maxIsl: f.synthesisMaxIsl,
    maxOsl: f.synthesisMaxOsl,
  };
  return isIdentitySynthesis(s) ? undefined : s;
}
