/**
 * Self-monitoring: the verdict rules against the floor a run measured, bursts told apart from
 * saturation, send lag, and a monitor that sees a blocked event loop.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ClientFloor } from '../../src/health/client-floor.js';
import { HEALTH_LIMITS, judge } from '../../src/health/health-judge.js';
import { clientHealthLine, sendLag, startClientMonitor } from '../../src/health/monitor.js';
import { SendLog } from '../../src/health/send-log.js';
import type { HealthFigures } from '../../src/health/types.js';
import { SummaryBuilder } from '../../src/metrics/summary.js';
import type { ProcessedRecord } from '../../src/record/types.js';
import { sampleRecord } from '../helpers/sample-record.js';

/** This VM's floor as a run measures it at start-up (figures of the runs in issue 13). */
const vmFloor: ClientFloor = {
  wake_floor_ms: { p50: 0.01, p99: 2.5, max: 3.1, count: 250 },
  idle_loop_delay_ms: { p50: 2.0, p99: 3.8, max: 4.1 },
};

/** A run at 100 req/s on an idle client of that VM: loop delay and send lag at the floor. */
const at100: HealthFigures = {
  ...vmFloor,
  event_loop_delay_ms: { p50: 2.1, p99: 5.9, max: 7.2 },
  event_loop_utilization: 0.2,
  cpu_percent: 18,
  main_thread_cpu_percent: 14,
  send_lag_ms: { p50: 0.05, p90: 0.6, p99: 3.1, max: 6, count: 500 },
  late_sends: { limit_ms: 4.5, count: 0, in_bursts: 0, on_connections: 0, largest_burst: 1 },
  gc: { count: 20, major_count: 0, per_second: 4, pause_ms_per_second: 3, max_pause_ms: 1.2 },
};

test('a 100 req/s run at the machine floor is ok; the same figures on a quiet machine are not', () => {
  const health = judge(at100);
  assert.equal(health.status, 'ok');
  assert.equal(health.saturated, false);
  assert.match(health.verdict, /^ok: .*wake floor p99 2\.5/);
  assert.deepEqual(health.limits_ms, {
    send_lag_p99: 2.5 + HEALTH_LIMITS.sendLagMarginMs,
    loop_delay_p99: 3.8 + HEALTH_LIMITS.loopDelayMarginMs,
  });
  assert.match(clientHealthLine(health), /^Client health: ok: /);
  const quiet = judge({
    ...at100,
    wake_floor_ms: { p50: 0.01, p99: 0.3, max: 0.5, count: 250 },
    idle_loop_delay_ms: { p50: 2, p99: 2.2, max: 2.3 },
    late_sends: { limit_ms: 2.3, count: 9, in_bursts: 0, on_connections: 0, largest_burst: 1 },
  });
  assert.notEqual(quiet.status, 'ok');
});

test('late sends from bursts on an idle client are "late (bursts)", not saturation', () => {
  // The Mooncake replay of issue 13: 12 % CPU, ELU 0.10, send lag p99 35 ms, 28 prompts on one tick.
  const health = judge({
    ...at100,
    event_loop_utilization: 0.1,
    cpu_percent: 12,
    send_lag_ms: { p50: 4.7, p90: 20, p99: 35, max: 65.7, count: 1756 },
    late_sends: { limit_ms: 4.5, count: 400, in_bursts: 370, on_connections: 0, largest_burst: 28 },
  });
  assert.equal(health.status, 'late');
  assert.equal(health.late_cause, 'bursts');
  assert.equal(health.saturated, false);
  assert.match(
    health.verdict,
    /^late \(bursts\): 400 requests later than 4\.5 ms; 370 of them .*largest burst 28/,
  );
  assert.doesNotMatch(health.verdict, /inflated|timestamps may be late/);
  // Writing the bursts held the loop up: the verdict says timestamps carry the loop delay.
  const held = judge({ ...health, event_loop_delay_ms: { p50: 2.3, p99: 24, max: 99 } });
  assert.equal(held.late_cause, 'bursts');
  assert.match(held.verdict, /timestamps may be late by up to the loop delay \(p99 24 ms\)/);
});

test('late sends without bursts are pauses when the loop stopped that long, else waits', () => {
  const paused = judge({
    ...at100,
    event_loop_delay_ms: { p50: 2.1, p99: 5.5, max: 105 },
    send_lag_ms: { p50: 0.09, p90: 1.5, p99: 39, max: 88, count: 500 },
    late_sends: { limit_ms: 4.5, count: 12, in_bursts: 0, on_connections: 0, largest_burst: 1 },
  });
  assert.equal(paused.status, 'late');
  assert.equal(paused.late_cause, 'pauses');
  assert.match(
    paused.verdict,
    /^late \(pauses\): .*stopped for up to 105 ms \(not garbage collection \(20 collections of at most 1\.2 ms\)/,
  );
  // The same stop, with a collection as long as half of it: the verdict names the collection.
  const collected = judge({ ...paused, gc: { ...at100.gc, max_pause_ms: 60, major_count: 1 } });
  assert.match(
    collected.verdict,
    /stopped for up to 105 ms \(the longest garbage-collection pause was 60 ms; 20 collections/,
  );
  // A loop busy two thirds of the wall time on a main thread that ran a sixth of it: starved of CPU.
  const starved = judge({ ...paused, event_loop_utilization: 0.67, main_thread_cpu_percent: 16.7 });
  assert.equal(starved.late_cause, 'pauses');
  assert.match(
    starved.verdict,
    /stopped for up to 105 ms \(its event loop was busy 67 % .* other processes on this machine took the CPU\)/,
  );
  const waited = judge({
    ...at100,
    send_lag_ms: { p50: 8, p90: 15, p99: 20, max: 25, count: 500 },
    late_sends: { limit_ms: 4.5, count: 300, in_bursts: 0, on_connections: 0, largest_burst: 1 },
  });
  assert.equal(waited.late_cause, 'waits');
  assert.match(waited.verdict, /^late \(waits\): .*not seen stopping/);
  const connecting = judge({
    ...at100,
    send_lag_ms: { p50: 8, p90: 15, p99: 20, max: 25, count: 500 },
    late_sends: { limit_ms: 4.5, count: 300, in_bursts: 10, on_connections: 200, largest_burst: 2 },
  });
  assert.equal(connecting.late_cause, 'connections');
  assert.match(
    connecting.verdict,
    /^late \(connections\): 300 requests .*200 of them spent most of it waiting for a new connection/,
  );
});

test('a busy loop with late sends, or any loop near full, is saturated; on-time sends on a busy loop are busy', () => {
  const lateAndLoaded = judge({
    ...at100,
    event_loop_utilization: HEALTH_LIMITS.busyUtilization + 0.05,
    main_thread_cpu_percent: 70,
    send_lag_ms: { p50: 3, p90: 9, p99: 29, max: 56, count: 4992 },
    late_sends: { limit_ms: 4.5, count: 400, in_bursts: 390, on_connections: 0, largest_burst: 3 },
  });
  assert.equal(lateAndLoaded.status, 'saturated');
  assert.equal(lateAndLoaded.saturated, true);
  assert.match(lateAndLoaded.verdict, /^saturated: the load generator, not the server, was the bottleneck/);
  assert.match(lateAndLoaded.verdict, /lower the load, add --workers/);
  // Busy 89 % of the wall time while running on a core 15 % of it: other processes held the CPU.
  const starved = judge({
    ...at100,
    event_loop_utilization: 0.89,
    main_thread_cpu_percent: 15,
    send_lag_ms: { p50: 30, p90: 76, p99: 98, max: 647, count: 1976 },
  });
  assert.equal(starved.status, 'saturated');
  assert.match(
    starved.verdict,
    /ran on a core for only 15 % of it: other processes on this machine took the CPU/,
  );
  const busyWorker = judge({ ...at100, workers: [{ event_loop_utilization: 0.95, cpu_percent: 95 }] });
  assert.equal(busyWorker.status, 'saturated');
  const busy = judge({ ...at100, event_loop_utilization: 0.8 });
  assert.equal(busy.status, 'busy');
  assert.equal(busy.saturated, false);
  const blocked = judge({ ...at100, event_loop_delay_ms: { p50: 2.1, p99: 30, max: 60 } });
  assert.equal(blocked.status, 'busy');
  assert.match(clientHealthLine(blocked), /^Client health: busy: sends were on time/);
});

test('a small run is judged on send lag p90, so one cold first request does not condemn the client', () => {
  const oneOutlier = judge({ ...at100, send_lag_ms: { p50: 0.3, p90: 0.8, p99: 29, max: 29, count: 24 } });
  assert.equal(oneOutlier.status, 'ok');
  const manyLate = judge({
    ...at100,
    event_loop_utilization: 0.8,
    send_lag_ms: { p50: 0.3, p90: 0.8, p99: 29, max: 29, count: 500 },
  });
  assert.equal(manyLate.status, 'saturated');
});

test('sendLag gives percentiles of the schedule_lag values in ms; none gives null', () => {
  assert.equal(sendLag([]), null);
  const records = Array.from({ length: 100 }, (_, i) => i);
  // lags 0..99 ms, numpy-linear percentiles as in the schedule_lag metric: p50 = 49.5, p90 = 89.1, p99 = 98.01
  assert.deepEqual(sendLag(records), { p50: 49.5, p90: 89.1, p99: 98.01, max: 99, count: 100 });
});

/** A processed record whose schedule and schedule_lag are given (the send log reads those). */
function sent(scheduledMs: number | null, lagMs?: number): ProcessedRecord {
  const metrics: Record<string, number> = lagMs === undefined ? {} : { schedule_lag: lagMs };
  return { ...sampleRecord({ scheduledNs: scheduledMs === null ? null : scheduledMs * 1e6 }), metrics };
}

/**
 * A send log wired as a run wires it: its lags read from the summary the same records are added to
 * (`add` feeds both, summary first).
 */
function wiredLog(): { log: SendLog; add: (record: ProcessedRecord) => void } {
  const summary = new SummaryBuilder();
  const log = new SendLog(() => summary.valuesOf('schedule_lag'));
  return {
    log,
    add: (record) => {
      summary.add(record);
      log.add(record);
    },
  };
}

test('the send log counts a late request as a burst when it waited behind its burst, not when all were late', () => {
  const { log, add } = wiredLog();
  assert.equal(log.lateSends(4), null);
  // A burst of 4 on one tick (the first on time, the rest queued behind it), completing out of order.
  for (const [at, lag] of [
    [100, 9],
    [100, 0.3],
    [100.4, 12],
    [100, 5],
  ] as const)
    add(sent(at, lag));
  // A pause: two requests 0.5 ms apart, both late by about the same.
  add(sent(300, 30));
  add(sent(300.5, 29.6));
  // Alone at 500 ms and late; one without a schedule and one without a lag are not counted.
  add(sent(500, 6));
  add(sent(null));
  add(sent(600));
  assert.deepEqual(log.lateSends(4), {
    limit_ms: 4,
    count: 6,
    in_bursts: 3,
    on_connections: 0,
    largest_burst: 4,
  });
});

test('the monitor sees a blocked event loop and reports thread figures of a pool client', async () => {
  const monitor = startClientMonitor(vmFloor, {
    threadStats: () => [{ eventLoopUtilization: 0.5, cpuSeconds: null }],
  });
  for (let round = 0; round < 3; round++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    const until = performance.now() + 60;
    while (performance.now() < until) {
      // block the loop
    }
  }
  const health = monitor.stop([], new SendLog(() => []));
  assert.ok(health.event_loop_delay_ms.max >= 50, `max delay ${health.event_loop_delay_ms.max} ms`);
  assert.ok(health.event_loop_utilization > 0 && health.event_loop_utilization <= 1);
  assert.ok(health.cpu_percent > 0);
  assert.deepEqual(health.workers, [{ event_loop_utilization: 0.5, cpu_percent: null }]);
  assert.equal(health.send_lag_ms, null);
  assert.equal(health.late_sends, null);
  assert.deepEqual(health.wake_floor_ms, vmFloor.wake_floor_ms);
});

test('the monitor counts the garbage collections of the main thread while it runs', async () => {
  const monitor = startClientMonitor(vmFloor);
  // Short-lived garbage, well beyond a young generation, in slices so the loop keeps turning.
  let sink = 0;
  for (let slice = 0; slice < 20; slice++) {
    for (let i = 0; i < 200_000; i++) sink += { i, s: `x${i}` }.s.length;
    await new Promise((resolve) => setImmediate(resolve));
  }
  const health = monitor.stop([], new SendLog(() => []));
  assert.ok(sink > 0);
  assert.ok(health.gc.count > 0, JSON.stringify(health.gc));
  assert.ok(health.gc.max_pause_ms > 0 && health.gc.pause_ms_per_second > 0, JSON.stringify(health.gc));
  assert.ok(health.gc.major_count <= health.gc.count);
});

/**
 * A request of a sparse schedule sent `lagMs` late, `waitMs` of it waiting for a new connection;
 * `idle` when its last connection had closed while idle (the server's keep-alive timeout).
 */
function reconnected(scheduledMs: number, lagMs: number, waitMs: number, idle: boolean): ProcessedRecord {
  const idleClose = { idleNs: 5.02e9, byServer: true, keepAliveS: null };
  const raw = { scheduledNs: scheduledMs * 1e6, connectionReused: false, ...(idle ? { idleClose } : {}) };
  return { ...sampleRecord(raw), metrics: { schedule_lag: lagMs, connection_wait: waitMs } };
}

/** The verdict of a run whose sends are `records`, on the VM floor, an idle client. */
function verdictOf(records: readonly ProcessedRecord[]): ReturnType<typeof judge> {
  const { log, add } = wiredLog();
  for (const r of records) add(r);
  const idle = log.idleClosed();
  return judge({
    ...at100,
    send_lag_ms: sendLag(log.clientLagsMs()),
    late_sends: log.lateSends(4.5),
    ...(idle === null ? {} : { idle_closed_connections: idle }),
  });
}

test('waits for a new connection after the server closed the idle one are the server\'s: not "late"', () => {
  // 0.14 req/s against a server that closes idle connections after 5 s: every request after the first
  // reconnects, 30 ms of a 31 ms lag spent opening the connection (a distant server).
  const sparse = [1, 2, 3, 4, 5, 6].map((k) => reconnected(k * 7000, 31, 30, true));
  const health = verdictOf(sparse);
  assert.equal(health.status, 'ok');
  assert.equal(health.send_lag_ms?.max, 1);
  assert.deepEqual(health.idle_closed_connections, {
    requests: 6,
    waited: 6,
    wait_ms_max: 30,
    idle_s: 5.02,
    closed_by_server: 6,
    closed_by_client: 0,
    server_keep_alive_s: null,
  });
  assert.match(
    health.verdict,
    /; the server closed idle connections after ~5 s \(its keep-alive timeout\); 6 requests waited for a new connection \(up to 30 ms, counted as the server's, not as send lag\)$/,
  );
  // The same waits with no idle close behind them are the client's connections: late.
  const cold = verdictOf([1, 2, 3, 4, 5, 6].map((k) => reconnected(k * 7000, 31, 30, false)));
  assert.equal(cold.status, 'late');
  assert.equal(cold.late_cause, 'connections');
  assert.equal(cold.idle_closed_connections, undefined);
});
