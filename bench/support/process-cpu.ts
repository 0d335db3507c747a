// CPU time of processes, from /proc (Linux), for benchmarks on a machine whose
// cores the load generator, the server and the database share: wall-clock
// rates there move with whatever else runs, CPU time per request much less.
import fs from 'node:fs';
import path from 'node:path';

/** User + system CPU seconds `pid` has used so far (all its threads); 0 once it is gone. */
export function processCpuSeconds(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime are fields 14 and 15 of proc(5) stat; after "pid (comm) " the 12th and 13th.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** The process ids of `pid`'s children (all its threads' children). */
function childrenOf(pid: number): number[] {
  try {
    return fs
      .readdirSync(`/proc/${pid}/task`)
      .flatMap((task) => fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(' ').filter(Boolean))
      .map(Number);
  } catch {
    return [];
  }
}

/** CPU seconds used so far by each process of a PostgreSQL cluster alive now: its postmaster and its backends. */
export function clusterCpuSeconds(dataDir: string): Map<number, number> {
  const postmaster = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  return new Map([postmaster, ...childrenOf(postmaster)].map((pid) => [pid, processCpuSeconds(pid)]));
}

/**
 * CPU seconds a cluster used between two readings of clusterCpuSeconds: what
 * each process added, a process started meanwhile all of its time. A backend
 * that exited meanwhile (an autovacuum worker) is not counted: a floor.
 */
export function clusterCpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let seconds = 0;
  for (const [pid, used] of after) seconds += Math.max(0, used - (before.get(pid) ?? 0));
  return seconds;
}

/**
 * CPU seconds used so far by each named group of `pid`'s threads alive now,
 * by the name proc(5) gives the thread (`comm`, at most 15 characters): a
 * worker thread carries the `name` it was started with ("herald-push-enc"
 * for the encryption pool), V8's own helper threads (garbage collection,
 * compilation) are "V8Worker" and "DelayedTaskSche", libuv's pool
 * "libuv-worker", the main thread "MainThread" (or the program's name).
 */
export function threadCpuSecondsByName(pid: number = process.pid): Map<string, number> {
  const seconds = new Map<string, number>();
  let tasks: string[];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return seconds;
  }
  for (const task of tasks) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      seconds.set(name, (seconds.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return seconds;
}
