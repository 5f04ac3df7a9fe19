/**
 * The machine's own wake-up floor: this process does nothing but sleep to targets 1 ms apart on the
 * run's clock ({@link RealClock}) and records how late each wake-up was. No client, no server, no
 * garbage: whatever lateness it shows, a send at that moment cannot beat. On a virtual machine
 * whose idle vCPUs halt, a sleeping thread can wait for the host to reschedule it; polling
 * (`spin`) keeps the vCPU running.
 *
 *   npm run bench:wake -- --precision timer,spin --count 5000
 */
import { RealClock, type TimingPrecision } from '../src/timing/real-clock.js';
import { arg, machine, r3 } from './common.js';

const precisions = arg('precision', 'timer,spin').split(',') as TimingPrecision[];
const count = Number(arg('count', '5000'));
const SPACING_NS = 1e6;

/** Wake-up lateness for `count` targets 1 ms apart, ms, sorted. */
async function lateness(precision: TimingPrecision): Promise<number[]> {
  const clock = new RealClock({ precision });
  const startNs = clock.nowNs() + 50e6;
  const late: number[] = [];
  for (let i = 0; i < count; i++) {
    const target = startNs + i * SPACING_NS;
    await clock.sleepUntil(target);
    late.push((clock.nowNs() - target) / 1e6);
  }
  return late.sort((a, b) => a - b);
}

const q = (sorted: number[], p: number): number | null =>
  r3(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]);
const rows = [];
for (const precision of precisions) {
  const late = await lateness(precision);
  rows.push({
    precision,
    wakeUps: late.length,
    latenessMs: {
      p50: q(late, 0.5),
      p90: q(late, 0.9),
      p99: q(late, 0.99),
      p999: q(late, 0.999),
      max: q(late, 1),
    },
    over2Ms: late.filter((x) => x > 2).length,
  });
}
console.log(
  JSON.stringify(
    {
      benchmark: 'wake-up floor',
      machine: machine(),
      method: `one idle process sleeps to ${count} targets ${SPACING_NS / 1e6} ms apart with RealClock (timer: wake thread + 0.2 ms poll; spin: 1.5 ms poll) and records wake-up − target; nothing else runs in it`,
      rows,
    },
    null,
    2,
  ),
);
process.exit(0);
