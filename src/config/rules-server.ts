/** The cross-field rule of the server options (`--wait-for-model-*`). */
import type { ConfigRule } from './rule-types.js';

/** The rule of the wait options: mode and interval mean nothing without a timeout (AIPerf's check). */
export const waitForModelRule: ConfigRule = {
  option: '--wait-for-model-timeout',
  check(c) {
    if ((c.waitForModelTimeoutSeconds ?? 0) > 0) return null;
    const given = [
      c.waitForModelMode === undefined ? null : '--wait-for-model-mode',
      c.waitForModelIntervalSeconds === undefined ? null : '--wait-for-model-interval',
    ].filter((f) => f !== null);
    return given.length === 0
      ? null
      : `${given.join(' and ')} ${given.length === 1 ? 'has' : 'have'} no effect without --wait-for-model-timeout > 0.`;
  },
};
