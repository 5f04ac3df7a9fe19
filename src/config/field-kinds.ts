/**
 * Schema pieces the option fields share. Each call or `.default()` makes a new schema, so a field's
 * option metadata (keyed by its outermost schema) is never shared.
 */
import { z } from 'zod';

/** A number > 0. */
export const positive = z.number().positive();

/** A whole number >= `min`. */
export const int = (min: number) => z.number().int().min(min);
