/** The cross-field rule of the trace synthesis options (`--synthesis-*`). */
import { z } from 'zod';
import { SYNTHESIS_DATASET_TYPES } from '../dataset/trace-synthesis.js';
import { optionFields } from '../util/option-meta.js';
import { type SynthesisFieldValues, synthesisFields } from './fields-synthesis.js';
import type { ConfigRule } from './rule-types.js';

const FIELDS = optionFields(z.object(synthesisFields));

/** The rule of the options: they rewrite Bailian and Mooncake trace rows only (AIPerf: trace datasets). */
export const synthesisRule: ConfigRule = {
  option: '--synthesis-prefix-len-multiplier',
  check(c) {
    const flags = FIELDS.filter((f) => {
      const value = c[f.path[0] as keyof SynthesisFieldValues];
      return value !== undefined && value !== f.defaultValue;
    }).map((f) => `--${f.meta.flag}`);
    const type = c.customDatasetType;
    if (flags.length === 0 || (SYNTHESIS_DATASET_TYPES as readonly string[]).includes(type ?? ''))
      return null;
    const not = type === undefined ? '' : ` (not ${type})`;
    return `${flags.join(', ')} ${flags.length === 1 ? 'applies' : 'apply'} to a --custom-dataset-type ${SYNTHESIS_DATASET_TYPES.join(' or ')} --input-file only${not}.`;
  },
};
