// VPCs: read to turn a VPC and subnet named by label into the subnet's id (as the cloud
// controller manager resolves its vpc-name/subnet-name annotations) and to know a subnet's range
// and region. The operator makes no VPC and only lists them.
import type { z } from "zod";
import type { Camelize } from "./case.ts";
import type { Transport } from "./http.ts";
import { listAll, type ListAllOptions } from "./listing.ts";
import { vpcListSchema, type vpcSchema } from "./schemas/vpcs.ts";

export type Vpc = Camelize<z.output<typeof vpcSchema>>;

export class VpcsApi {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /** Every VPC of the account, each with its subnets (one list, paged). */
  listAll(opts?: ListAllOptions): Promise<Vpc[]> {
    return listAll(this.transport, "/vpcs", {}, vpcListSchema, opts);
  }
}
