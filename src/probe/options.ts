/**
 * Options of `tokenload probe`: one zod schema whose fields carry their flag, unit and help text
 * ({@link option}). The endpoint fields are `profile`'s own (same flags, parsing and defaults), so a
 * probe command line is a profile command line's endpoint part.
 */
import { z } from 'zod';
import { endpointFields } from '../config/fields-endpoint.js';
import { option } from '../util/option-meta.js';

/** Zod schema of every probe option; `parse({ models: [...] })` yields the defaults. */
export const ProbeOptionsSchema = z.strictObject({
  models: endpointFields.models,
  url: endpointFields.url,
  endpointType: endpointFields.endpointType,
  endpointPath: endpointFields.endpointPath,
  headers: endpointFields.headers,
  apiKey: endpointFields.apiKey,
  sessionHeaders: endpointFields.sessionHeaders,
  extraInputs: endpointFields.extraInputs,
  useLegacyMaxTokens: endpointFields.useLegacyMaxTokens,
  tokenizer: endpointFields.tokenizer,
  tokenizerRevision: endpointFields.tokenizerRevision,
  maxTokens: option(z.number().int().min(1).default(16), {
    flag: 'max-tokens',
    unit: 'tokens',
    help: 'output tokens asked of each probe request (a reasoning model may need more to show both fields)',
  }),
  timeoutSeconds: option(z.number().positive().default(3), {
    flag: 'timeout-seconds',
    unit: 's',
    help: 'time limit of each probe request; when the first generation request gets no answer in it, the other generation checks are skipped',
  }),
  keepAliveIdleSeconds: option(z.number().min(0).default(6), {
    flag: 'keep-alive-idle-seconds',
    unit: 's',
    help: 'how long an idle connection is watched for the server closing it (in parallel with the other checks; 0 = off)',
  }),
  json: option(z.boolean().default(false), {
    flag: 'json',
    help: 'print the findings as JSON instead of a table',
  }),
  output: option(z.string().min(1).optional(), {
    flag: 'output',
    short: '-o',
    unit: 'path',
    help: 'also write the findings as JSON to this file',
    defaultText: '(none)',
  }),
});

/** Parsed probe options (defaults applied). */
export type ProbeOptions = z.infer<typeof ProbeOptionsSchema>;

/** What a library caller gives: any subset of the options; `models` is required. */
export type ProbeOptionsInput = z.input<typeof ProbeOptionsSchema>;
