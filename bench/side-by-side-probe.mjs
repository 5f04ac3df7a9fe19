// Preloaded with `node --import` into the client and the stub by bench/side-by-side.ts. Writes, to the
// file named by $SIDE_BY_SIDE_CLOCK_FILE, this process's offset between the epoch ns that tokenload's
// TimeBase (src/timing/clock.ts) gives a moment and `process.hrtime` (CLOCK_MONOTONIC, one clock for
// every process of the machine) at that moment. Each process anchors its epoch mapping once at start
// (`performance.timeOrigin`, µs precision), so two processes' epoch stamps of one instant differ by
// exactly the difference of their offsets; the benchmark reports it and takes it out of the join.
// Main thread only (worker threads have their own timeOrigin and are not the one exporting records).
import { writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const file = process.env.SIDE_BY_SIDE_CLOCK_FILE;
if (isMainThread && file) {
  delete process.env.SIDE_BY_SIDE_CLOCK_FILE;
  // The same formula as TimeBase: epoch ns at performance.now() = 0, then + performance.now() in ns.
  const originNs = BigInt(Math.round(performance.timeOrigin * 1e3)) * 1000n;
  let best = null;
  for (let i = 0; i < 2000; i++) {
    const before = process.hrtime.bigint();
    const epochNs = originNs + BigInt(Math.round(performance.now() * 1e6));
    const after = process.hrtime.bigint();
    const gapNs = after - before;
    if (best === null || gapNs < best.gapNs) best = { gapNs, offsetNs: epochNs - (before + after) / 2n };
  }
  writeFileSync(file, JSON.stringify({ offsetNs: String(best.offsetNs), readGapNs: String(best.gapNs) }));
}
