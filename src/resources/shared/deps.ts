// What every kind is built from, besides the read handles the runtime gives it.
import type { LinodeClient } from "../../linode/index.ts";
import type { PollIntervals } from "../../runtime/timings.ts";

export interface ResourceDeps {
  linode: LinodeClient;
  poll: PollIntervals;
  /** This cluster's identity: part of every derived cloud label, so clusters sharing an account never collide. */
  clusterId: string;
}
