/** Self-monitoring: the verdict rules, send lag, and a monitor that sees a blocked event loop. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clientHealthLine, judge, SATURATION, sendLag, startClientMonitor } from '../../src/run/monitor.js';

const calm = {
  event_loop_delay_ms: { p50: 1, p99: 2, max: 3 },
  event_loop_utilization: 0.2,
  cpu_percent: 30,
  main_thread_cpu_percent: 25,
  send_lag_ms: { p50: 0.1, p99: 0.5, max: 1 },
};

test('a calm client is ok; loop delay, send lag or a busy worker make it saturated', () => {
  assert.equal(judge(calm).saturated, false);
  assert.match(judge(calm).verdict, /^ok/);
  const slowLoop = judge({
    ...calm,
    event_loop_delay_ms: { p50: 5, p99: SATURATION.loopDelayP99Ms + 1, max: 80 },
  });
  assert.equal(slowLoop.saturated, true);
  assert.match(slowLoop.verdict, /^client saturated/);
  const lagging = judge({ ...calm, send_lag_ms: { p50: 3, p99: SATURATION.sendLagP99Ms + 1, max: 40 } });
  assert.equal(lagging.saturated, true);
  const busyWorker = judge({ ...calm, workers: [{ event_loop_utilization: 0.95, cpu_percent: 95 }] });
  assert.equal(busyWorker.saturated, true);
  const busy = judge({ ...calm, event_loop_utilization: 0.8 });
  assert.equal(busy.saturated, false);
  assert.match(busy.verdict, /^client busy/);
  assert.match(clientHealthLine(busy), /^Client health: client busy/);
});

test('sendLag gives percentiles of the schedule_lag values in ms; none gives null', () => {
  assert.equal(sendLag([]), null);
  const records = Array.from({ length: 100 }, (_, i) => i);
  // lags 0..99 ms, numpy-linear percentiles as in the schedule_lag metric: p50 = 49.5, p90 = 89.1, p99 = 98.01
  assert.deepEqual(sendLag(records), { p50: 49.5, p90: 89.1, p99: 98.01, max: 99, count: 100 });
});

test('a small run is judged on send lag p90, so one cold first request does not condemn the client', () => {
  const base = {
    event_loop_delay_ms: { p50: 1, p99: 2, max: 3 },
    event_loop_utilization: 0.05,
    cpu_percent: 7,
    main_thread_cpu_percent: null,
  };
  const oneOutlier = judge({ ...base, send_lag_ms: { p50: 0.3, p90: 0.8, p99: 29, max: 29, count: 24 } });
  assert.equal(oneOutlier.saturated, false);
  assert.match(oneOutlier.verdict, /^ok/);
  const manyLate = judge({ ...base, send_lag_ms: { p50: 0.3, p90: 0.8, p99: 29, max: 29, count: 500 } });
  assert.equal(manyLate.saturated, true);
});

test('the monitor sees a blocked event loop and reports thread figures of a pool client', async () => {
  const monitor = startClientMonitor({
    threadStats: () => [{ eventLoopUtilization: 0.5, cpuSeconds: null }],
  });
  for (let round = 0; round < 3; round++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    const until = performance.now() + 60;
    while (performance.now() < until) {
      // block the loop
    }
  }
  const health = monitor.stop([]);
  assert.ok(health.event_loop_delay_ms.max >= 50, `max delay ${health.event_loop_delay_ms.max} ms`);
  assert.ok(health.event_loop_utilization > 0 && health.event_loop_utilization <= 1);
  assert.ok(health.cpu_percent > 0);
  assert.deepEqual(health.workers, [{ event_loop_utilization: 0.5, cpu_percent: null }]);
  assert.equal(health.send_lag_ms, null);
});
