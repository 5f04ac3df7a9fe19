/**
 * Options of `tokenload merge`: one zod schema whose fields carry their flag and help text
 * ({@link option}); the shard folders are the command's arguments.
 */
import { z } from 'zod';
import { option } from '../util/option-meta.js';

/**
 * Metric values a merge keeps in memory (512 MiB) before it spills sorted runs of them to disk
 * (metrics/value-store.ts): ordinary merges never spill; 10,000,000 records stay within 4 GB.
 */
export const DEFAULT_SPILL_AFTER_VALUES = 1 << 26;

/** Zod schema of every merge option. */
export const MergeOptionsSchema = z.strictObject({
  shardDirs: option(z.array(z.string().min(1)).min(1), {
    flag: 'shard-dirs',
    help: 'artifact folders of the shards (the command arguments SHARD_DIR...)',
    internal: true,
  }),
  artifactDir: option(z.string().min(1), {
    flag: 'artifact-dir',
    unit: 'dir',
    help: 'folder the merged run is written to (an earlier run’s artifacts there are removed first)',
  }),
  allowPartial: option(z.boolean().default(false), {
    flag: 'allow-partial',
    help: 'merge even when shards are missing or did not complete; the result says partial and lists them',
  }),
  spillAfterValues: option(z.number().int().min(0).default(DEFAULT_SPILL_AFTER_VALUES), {
    flag: 'spill-after-values',
    unit: 'values',
    help: 'metric values (8 bytes each) kept in memory before sorted runs of them spill to files in the artifact folder (library only; tests set it tiny to force spilling)',
    internal: true,
  }),
  commandLine: option(z.string().default('tokenload merge'), {
    flag: 'command-line',
    help: 'the command line shown as the console’s CLI Command',
    internal: true,
  }),
});

/** Parsed merge options (defaults applied). */
export type MergeOptions = z.infer<typeof MergeOptionsSchema>;

/** What a library caller gives. */
export type MergeOptionsInput = z.input<typeof MergeOptionsSchema>;
