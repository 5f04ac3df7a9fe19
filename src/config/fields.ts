/**
 * Every option field of a profile run, as given: the `--help` groups (`./fields-*.ts`) in one strict
 * object. The cross-field rules (`./rules.ts`) read its output; `./resolve.ts` turns that into the
 * resolved configuration.
 */
import { z } from 'zod';
import { endpointFields } from './fields-endpoint.js';
import { inputFields } from './fields-input.js';
import { loadFields } from './fields-load.js';
import { outputFields } from './fields-output.js';
import { scheduleFields } from './fields-schedule.js';

/** Every option field, as given (before defaults that depend on other fields are resolved). */
export const ProfileFieldsSchema = z.strictObject({
  ...endpointFields,
  ...inputFields,
  ...scheduleFields,
  ...loadFields,
  ...outputFields,
});

/** The fields after per-field defaults, before cross-field resolution: what every rule reads. */
export type ProfileFields = z.output<typeof ProfileFieldsSchema>;

/** What a library caller or the CLI gives: any subset of the options; `models` is required. */
export type ProfileConfigInput = z.input<typeof ProfileFieldsSchema>;
