/**
 * Options of `tokenload merge`: one zod schema whose fields carry their flag and help text
 * ({@link option}); the shard folders are the command's arguments.
 */
import { z } from 'zod';
import { option } from '../util/option-meta.js';

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
