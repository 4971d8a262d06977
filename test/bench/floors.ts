// The floors a scale run is held to, computed from the object counts before the run: the calls
// the workload cannot do without, and the least time the API's windows and the client's bucket
// let those calls take. What the operator chooses to read beyond them is what the ratios show.

/** The call budget as the API and the client shape it. */
export interface Budget {
  /** Calls the operator may send in one of the API's fixed windows (its share of the general limit). */
  perWindow: number;
  /** The API's window, seconds (fixed: counted from its first call). */
  windowSeconds: number;
  /** Paginated GETs the operator may send in a window (its share of the API's 200 a minute). */
  listsPerWindow: number;
}

/** The emulator's recorded limits (1,840 calls a minute, 200 paginated GETs a minute) at the operator's share. */
export const budgetAt = (apiShare: number): Budget => ({ perWindow: 1840 * apiShare, windowSeconds: 60, listsPerWindow: 200 * apiShare });

/**
 * Least seconds to send `calls` of which `lists` are paginated: the first window's budget at
 * once, each later window's at its start (the client's bucket, as large as a window's share and
 * refilled over a window, never holds more), so the last call goes out at the start of window
 * ceil(calls ÷ perWindow). Assumes the first window begins with the first call, the kindest case.
 */
export function sendSeconds(calls: number, lists: number, b: Budget): number {
  const windows = Math.max(Math.ceil(calls / b.perWindow), Math.ceil(lists / b.listsPerWindow), 1);
  return (windows - 1) * b.windowSeconds;
}

export interface Workload {
  /** Databases per engine (each engine is its own list). */
  databasesByEngine: number[];
  nodeBalancers: number;
  /** Configs per NodeBalancer (each config's nodes are read once for status). */
  configsPerNodeBalancer: number;
  snapshots: number;
  /** Seconds the API takes to provision a database or to take a backup. */
  provisionSeconds: number;
  /** The operator's pending poll: how often a sweep of the shared lists sees pending objects settle. */
  pendingPollSeconds: number;
}

export interface WorkloadFloor {
  calls: number;
  /** The shared lists' pages (sweeps × pages a sweep). */
  lists: number;
  /** Every paginated GET among the calls: the lists' pages and each NodeBalancer's configs and nodes lists. */
  paginated: number;
  sweeps: number;
  seconds: number;
  parts: [string, number][];
  formula: string;
}

const PAGE = 500;

/**
 * The workload-only floor: per database its create, credentials and CA; per NodeBalancer its
 * create (configs and nodes inline), one configs list (the backends' health Ready reports) and
 * one nodes list per config (the node ids and states status shows); per snapshot its create,
 * the backups list that finds it (the create answers {}) and its database's credentials read
 * again (the backup moves the database's `updated`, the API's only sign of a credentials reset:
 * a Secret kept true reads them again; the CA only if they changed); per kind and account ceil(N ÷ 500) list pages
 * per sweep, a sweep every pending poll while the kind converges. The time floor sends those
 * calls as fast as the budget allows (the general window's and the paginated class's); databases
 * then wait out provisioning (twice with snapshots: a backup can be taken only of a database
 * already provisioned) and one sweep to see it. Sweeps depend on the time and the time on the
 * calls: iterated to a fixed point.
 */
export function workloadFloor(w: Workload, b: Budget): WorkloadFloor {
  const databases = w.databasesByEngine.reduce((a, n) => a + n, 0);
  const perObject: [string, number][] = [
    ["databases: create, credentials, CA", 3 * databases],
    ["NodeBalancers: create, configs list, a nodes list per config", w.nodeBalancers * (2 + w.configsPerNodeBalancer)],
    ["snapshots: create, the backups list that finds it, the database's credentials read again", 3 * w.snapshots],
  ];
  const dbOwn = 3 * databases + 3 * w.snapshots;
  const fixed = perObject.reduce((a, [, n]) => a + n, 0);
  // A NodeBalancer's configs list and each config's nodes list are paginated GETs, as is the
  // backups list that finds a snapshot (its create answers {}): the API's 200-a-minute class, of
  // which the operator takes its share, bounds them as much as the rest.
  const paginatedOwn = w.nodeBalancers * (1 + w.configsPerNodeBalancer) + w.snapshots;
  const dbPages = w.databasesByEngine.reduce((a, n) => a + Math.ceil(n / PAGE), 0);
  const nbPages = Math.ceil(w.nodeBalancers / PAGE);
  /**
   * Sweeps every pending poll for `seconds(sweeps)`, iterated to a fixed point; never more often
   * than leaves half the paginated class to the rest (a small share's class cannot hold a sweep
   * every pending poll, and the sweeps alone would then push the time out without end).
   */
  const converge = (pages: number, seconds: (sweeps: number) => number): { sweeps: number; seconds: number } => {
    const every = Math.max(w.pendingPollSeconds, (2 * pages * b.windowSeconds) / b.listsPerWindow);
    let sweeps = 1;
    let t = seconds(sweeps);
    for (let i = 0; i < 50; i++) {
      const next = Math.max(1, Math.ceil(t / every));
      if (next === sweeps) break;
      sweeps = next;
      t = seconds(sweeps);
    }
    return { sweeps, seconds: t };
  };
  // Databases and their snapshots (which wait in the databases' list): their lists are swept
  // while they converge, the budget theirs alone (the kindest case).
  const waits = (w.snapshots > 0 ? 2 : 1) * w.provisionSeconds + w.pendingPollSeconds;
  const db = databases + w.snapshots === 0 ? { sweeps: 0, seconds: 0 } : converge(dbPages, (n) => sendSeconds(dbOwn + n * dbPages, n * dbPages + w.snapshots, b) + waits);
  // Everything: the NodeBalancers' list each sweep until the last call is sent.
  const all = converge(dbPages + nbPages, (n) => Math.max(db.seconds, sendSeconds(fixed + db.sweeps * dbPages + n * nbPages, paginatedOwn + db.sweeps * dbPages + n * nbPages, b)));
  const nbSweeps = nbPages === 0 ? 0 : all.sweeps;
  const lists = db.sweeps * dbPages + nbSweeps * nbPages;
  return {
    calls: fixed + lists, lists, paginated: paginatedOwn + lists, sweeps: all.sweeps, seconds: all.seconds,
    parts: [...perObject, [`list pages: databases ${String(dbPages)} a sweep × ${String(db.sweeps)} sweeps, NodeBalancers ${String(nbPages)} × ${String(nbSweeps)}`, lists]],
    formula: `3 a database (create, credentials, CA) + (2 + configs) a NodeBalancer (create with configs and nodes inline, configs list, a nodes list per config) + 3 a snapshot (create, the backups list that finds it, its database's credentials read again: the backup moved \`updated\`, the API's only sign of a reset) + ceil(N ÷ ${String(PAGE)}) list pages per kind and engine per sweep, a sweep every ${String(w.pendingPollSeconds)} s (or as often as half the paginated class allows) while the kind converges; time floor: (ceil(max(calls ÷ ${String(b.perWindow)}, paginated GETs ÷ ${String(b.listsPerWindow)})) − 1) × ${String(b.windowSeconds)} s, and for databases + provisioning (${String(w.provisionSeconds)} s, twice with snapshots) + a sweep (${String(w.pendingPollSeconds)} s)`,
  };
}
