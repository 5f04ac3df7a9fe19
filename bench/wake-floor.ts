/**
 * The machine's own wake-up floor: this process does nothing but sleep to targets 1 ms apart on the
 * run's clock ({@link RealClock}) and records how late each wake-up was ({@link wakeLateness}, the
 * code a profile run's start-up probe uses). No client, no server, no garbage: whatever lateness it
 * shows, a send at that moment cannot beat. On a virtual machine whose idle vCPUs halt, a sleeping
 * thread can wait for the host to reschedule it; polling (`spin`) keeps the vCPU running. The last
 * row is the probe itself (`client_health.wake_floor_ms` of a run: 250 wake-ups, timer precision).
 *
 *   npm run bench:wake -- --precision timer,spin --count 5000
 */

import { FLOOR_WAKEUPS, measureClientFloor } from '../src/health/client-floor.js';
import { percentileSorted } from '../src/metrics/stats.js';
import { RealClock, type TimingPrecision } from '../src/timing/real-clock.js';
import { wakeLateness } from '../src/timing/wake-floor.js';
import { arg, machine, r3 } from './common.js';

const precisions = arg('precision', 'timer,spin').split(',') as TimingPrecision[];
const count = Number(arg('count', '5000'));
const SPACING_NS = 1e6;

const rows = [];
for (const precision of precisions) {
  const late = (
    await wakeLateness(new RealClock({ precision }), { count, spacingNs: SPACING_NS, leadNs: 50e6 })
  )
    .slice()
    .sort();
  const q = (p: number): number | null => r3(percentileSorted(late, p));
  rows.push({
    precision,
    wakeUps: late.length,
    latenessMs: { p50: q(50), p90: q(90), p99: q(99), p999: q(99.9), max: q(100) },
    over2Ms: late.filter((x) => x > 2).length,
  });
}
const probe = await measureClientFloor(new RealClock());
console.log(
  JSON.stringify(
    {
      benchmark: 'wake-up floor',
      machine: machine(),
      method: `one idle process sleeps to ${count} targets ${SPACING_NS / 1e6} ms apart with RealClock (timer: wake thread + 0.2 ms poll; spin: 1.5 ms poll) and records wake-up − target (numpy-linear percentiles); nothing else runs in it. runProbe: the ${FLOOR_WAKEUPS}-wake-up probe a profile run makes before its first send, with the event-loop delay it saw`,
      rows,
      runProbe: probe,
    },
    null,
    2,
  ),
);
process.exit(0);
