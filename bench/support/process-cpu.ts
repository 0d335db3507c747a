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

/**
 * CPU seconds used so far by a PostgreSQL cluster: its postmaster and the
 * backends alive now (a backend that exited meanwhile is not counted, so
 * take both readings while the connections of the measured load are open).
 */
export function clusterCpuSeconds(dataDir: string): number {
  const postmaster = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  return [postmaster, ...childrenOf(postmaster)].reduce((sum, pid) => sum + processCpuSeconds(pid), 0);
}
