/**
 * The raw values of one metric, kept for exact percentiles: 8 bytes a value in `Float64Array` chunks
 * outside the JS heap, which grow without copying what they hold. A JS `number[]` needs up to half
 * again its size while it grows, counts against the heap limit (~4 GB by default), and cannot hold
 * more than ~169 M values at all (V8 aborts the process): a long streamed run's
 * `inter_chunk_latency` (one value per chunk gap, ~375 M for 1 M requests of 376 tokens) is more.
 *
 * With a {@link SpillBudget} (a merge of many shards), memory is bounded: once the stores sharing the
 * budget hold more than its bound, each chunk that fills is sorted in place and written to a file
 * of its own store as one sorted run, and its memory is reused. The statistics then read every run
 * in one ascending k-way merge ({@link ValueStore.describe}): the same values, in the same order, as
 * sorting them all in memory, so the figures are bit for bit those of the in-memory path.
 */
import { closeSync, openSync, readSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { type AscendingView, meanAndStd, viewOfSorted } from './stats.js';

/** Values in the first chunk; each next chunk doubles, up to {@link MAX_CHUNK}. */
const FIRST_CHUNK = 256;
/** Largest chunk, values (8 MiB): also the largest sorted run written to disk. */
const MAX_CHUNK = 1 << 20;
/** Values read from a run on disk at a time (64 KiB): the merge's memory is this per run. */
const READ_BLOCK = 8192;
/** Values the merge hands on at a time. */
const OUT_BLOCK = 65536;

/**
 * When and where the {@link ValueStore}s of one summary spill to disk: they share one count of the
 * values held in memory; above `boundValues`, a store's next full chunk goes to a sorted run in a
 * file under `dir` (opened and unlinked at once, so nothing is left behind, even by a crash).
 * Memory is then at most the bound plus one chunk (8 MiB) per store.
 */
export class SpillBudget {
  /** Values held in memory by the stores sharing this budget. */
  held = 0;
  /** Bytes written to spill files by those stores (the disk a merge needs beside its output). */
  spilledBytes = 0;
  /** Sorted runs written. */
  runs = 0;

  /**
   * @param boundValues - values (8 bytes each) kept in memory before chunks spill; ≥ 0.
   * @param dir - an existing folder for the spill files (a merge uses its artifact folder).
   * @throws {RangeError} when `boundValues` is negative or not an integer.
   */
  constructor(
    readonly boundValues: number,
    readonly dir: string,
  ) {
    if (!(Number.isInteger(boundValues) && boundValues >= 0))
      throw new RangeError(`a spill bound is a whole number of values ≥ 0, got ${boundValues}`);
  }
}

/** A sorted run: in memory (`values`) or in the store's file (`position` bytes, `length` values). */
interface Run {
  values: Float64Array | null;
  position: number;
  length: number;
}

/** Closes a dropped store's spill file. */
const closeOnCollect = new FinalizationRegistry<number>((fd) => {
  try {
    closeSync(fd);
  } catch {
    // already closed by release()
  }
});

let spillFiles = 0;

/** Ascending order of `Float64Array.prototype.sort`: NaN after every number. */
function less(a: number, b: number): boolean {
  return a < b || (Number.isNaN(b) && !Number.isNaN(a));
}

/** An append-only list of numbers (float64), in memory or, with a {@link SpillBudget}, partly on disk. */
export class ValueStore {
  private full: Float64Array[] = [];
  private current = new Float64Array(FIRST_CHUNK);
  private fill = 0;
  /** Sorted runs on disk, in the order written. */
  private readonly runs: Run[] = [];
  private fd: number | null = null;
  /** The spill file's path while it still exists (only where it could not be unlinked when opened). */
  private path: string | null = null;
  private written = 0;
  /** Values held. */
  length = 0;

  /** @param budget - shared with the other stores of one summary; null: every value stays in memory. */
  constructor(private readonly budget: SpillBudget | null = null) {}

  /** Appends `value`. */
  push(value: number): void {
    if (this.fill === this.current.length) this.chunkFull();
    this.current[this.fill++] = value;
    this.length++;
    if (this.budget !== null) this.budget.held++;
  }

  private chunkFull(): void {
    const next = Math.min(this.current.length * 2, MAX_CHUNK);
    if (this.budget !== null && this.budget.held > this.budget.boundValues) {
      this.spill(this.current);
      // The chunk's memory is reused when it is already the largest.
      if (next > this.current.length) this.current = new Float64Array(next);
    } else {
      this.full.push(this.current);
      this.current = new Float64Array(next);
    }
    this.fill = 0;
  }

  /** Sorts `chunk` in place and appends it to the spill file as one run. */
  private spill(chunk: Float64Array): void {
    const budget = this.budget as SpillBudget;
    chunk.sort();
    if (this.fd === null) {
      const path = join(budget.dir, `.tokenload-spill-${process.pid}-${++spillFiles}`);
      this.fd = openSync(path, 'w+');
      try {
        unlinkSync(path);
      } catch {
        // A system that cannot unlink an open file (Windows): removed when the store is released.
        this.path = path;
      }
      closeOnCollect.register(this, this.fd, this);
    }
    const bytes = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    for (let done = 0; done < bytes.length; )
      done += writeSync(this.fd, bytes, done, bytes.length - done, this.written + done);
    this.runs.push({ values: null, position: this.written, length: chunk.length });
    this.written += bytes.length;
    budget.held -= chunk.length;
    budget.spilledBytes += bytes.length;
    budget.runs++;
  }

  /** Whether some values are on disk (then only {@link describe} and {@link sorted} read them). */
  get spilled(): boolean {
    return this.runs.length > 0;
  }

  /** Calls `f` with each in-memory chunk's filled part, in order. */
  private forEachChunk(f: (values: Float64Array, at: number) => void): void {
    let at = 0;
    for (const chunk of this.full) {
      f(chunk, at);
      at += chunk.length;
    }
    f(this.current.subarray(0, this.fill), at);
  }

  /** Every value, ascending, in one new array (NaN last, as `Float64Array.prototype.sort` puts it). */
  sorted(): Float64Array {
    const out = new Float64Array(this.length);
    if (this.spilled) {
      let at = 0;
      this.mergeAscending((block, n) => {
        out.set(block.subarray(0, n), at);
        at += n;
      });
      return out;
    }
    this.forEachChunk((values, at) => out.set(values, at));
    return out.sort();
  }

  /**
   * The values in the order pushed, chunk by chunk (views of the store's own memory, not copies).
   * @throws {RangeError} when the store spilled: its runs are sorted, the order pushed is gone.
   */
  *chunks(): Generator<Float64Array> {
    if (this.spilled) throw new RangeError('a value store that spilled to disk keeps no push order');
    yield* this.full;
    yield this.current.subarray(0, this.fill);
  }

  /**
   * Every value in the order pushed, as a new array.
   * @throws {RangeError} when the store spilled: its runs are sorted, the order pushed is gone.
   */
  toArray(): number[] {
    if (this.spilled) throw new RangeError('a value store that spilled to disk keeps no push order');
    const out: number[] = [];
    this.forEachChunk((values) => {
      for (const v of values) out.push(v);
    });
    return out;
  }

  /**
   * `f` of the store's values seen ascending ({@link AscendingView}); the store must be non-empty.
   * In memory: one sorted copy. Spilled: `f` is called once first with placeholder values to learn
   * which ranks it reads (it must read the same ranks for the same count), then the runs are merged
   * twice (the sum and the ranks, then the squared deviations: {@link meanAndStd}'s two passes in
   * the same ascending order), and `f` is called again with them.
   */
  describe<T>(f: (view: AscendingView) => T): T {
    const n = this.length;
    if (!this.spilled) return f(viewOfSorted(this.sorted()));
    const wanted = new Set<number>();
    const probe = (i: number): number => {
      wanted.add(i);
      return 0;
    };
    f({ count: n, at: probe, avg: 0, std: 0 });
    const ranks = [...wanted].sort((a, b) => a - b);
    const found = new Map<number, number>();
    let sum = 0;
    let index = 0;
    let next = 0;
    this.mergeAscending((block, m) => {
      for (let k = 0; k < m; k++) sum += block[k] as number;
      while (next < ranks.length && (ranks[next] as number) < index + m) {
        const rank = ranks[next++] as number;
        found.set(rank, block[rank - index] as number);
      }
      index += m;
    });
    const avg = sum / n;
    let squares = 0;
    this.mergeAscending((block, m) => {
      for (let k = 0; k < m; k++) squares += ((block[k] as number) - avg) ** 2;
    });
    return f({ count: n, at: (i) => found.get(i) as number, avg, std: Math.sqrt(squares / n) });
  }

  /** The sorted runs: those on disk, then the in-memory chunks, each sorted in place. */
  private allRuns(): Run[] {
    const inMemory: Run[] = [];
    this.forEachChunk((values) => {
      if (values.length === 0) return;
      values.sort();
      inMemory.push({ values, position: 0, length: values.length });
    });
    return [...this.runs, ...inMemory];
  }

  /**
   * Hands every value to `sink`, ascending (NaN last), in blocks (`block[0…n)`, reused between
   * calls), by a k-way merge of the sorted runs through a binary heap of their heads.
   */
  private mergeAscending(sink: (block: Float64Array, n: number) => void): void {
    const cursors = this.allRuns().map((run) => new RunCursor(run, this.fd));
    const heap = cursors.filter((c) => c.next());
    const siftDown = (from: number): void => {
      const size = heap.length;
      let i = from;
      const c = heap[i] as RunCursor;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= size) break;
        const right = heap[child + 1];
        if (right !== undefined && less(right.head, (heap[child] as RunCursor).head)) child++;
        const smaller = heap[child] as RunCursor;
        if (!less(smaller.head, c.head)) break;
        heap[i] = smaller;
        i = child;
      }
      heap[i] = c;
    };
    for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(i);
    const out = new Float64Array(OUT_BLOCK);
    let o = 0;
    while (heap.length > 0) {
      const top = heap[0] as RunCursor;
      out[o++] = top.head;
      if (o === OUT_BLOCK) {
        sink(out, o);
        o = 0;
      }
      if (!top.next()) {
        const last = heap.pop() as RunCursor;
        if (heap.length === 0) break;
        heap[0] = last;
      }
      siftDown(0);
    }
    if (o > 0) sink(out, o);
  }

  /** Closes the spill file and drops every value; the store is empty afterwards. */
  release(): void {
    if (this.fd !== null) {
      closeOnCollect.unregister(this);
      closeSync(this.fd);
      this.fd = null;
    }
    if (this.path !== null) rmSync(this.path, { force: true });
    this.path = null;
    if (this.budget !== null) this.budget.held -= this.length - this.runs.reduce((s, r) => s + r.length, 0);
    this.runs.length = 0;
    this.full = [];
    this.current = new Float64Array(FIRST_CHUNK);
    this.fill = 0;
    this.length = 0;
    this.written = 0;
  }
}

/** Reads one sorted run value by value: from memory, or from the spill file a block at a time. */
class RunCursor {
  /** The value the cursor is on (valid after {@link next} returned true). */
  head = 0;
  private buffer: Float64Array;
  private at = 0;
  private end = 0;
  /** Next byte of the file to read, and where the run's bytes end. */
  private position: number;
  private readonly stop: number;

  constructor(
    run: Run,
    private readonly fd: number | null,
  ) {
    if (run.values !== null) {
      this.buffer = run.values;
      this.end = run.values.length;
      this.position = this.stop = 0;
    } else {
      this.buffer = new Float64Array(Math.min(READ_BLOCK, run.length));
      this.position = run.position;
      this.stop = run.position + run.length * 8;
    }
  }

  /** Moves to the next value; false at the run's end. */
  next(): boolean {
    if (this.at === this.end && !this.refill()) return false;
    this.head = this.buffer[this.at++] as number;
    return true;
  }

  private refill(): boolean {
    if (this.position >= this.stop) return false;
    const bytes = Math.min(this.buffer.byteLength, this.stop - this.position);
    const view = new Uint8Array(this.buffer.buffer, 0, bytes);
    for (let done = 0; done < bytes; ) {
      const got = readSync(this.fd as number, view, done, bytes - done, this.position + done);
      if (got === 0) throw new Error('a value spill file ended early');
      done += got;
    }
    this.position += bytes;
    this.at = 0;
    this.end = bytes / 8;
    return true;
  }
}
