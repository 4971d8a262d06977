// VPCs with their subnets, as far as a NodeBalancer names them: ids, labels, region, ranges.
import { z } from "zod";
import { envelope } from "./common.ts";

export const subnetSchema = z.object({
  id: z.number().int(),
  label: z.string(),
  /** The subnet's IPv4 range (CIDR); null when it has none. */
  ipv4: z.string().nullish().transform((v) => v ?? null),
});

export const vpcSchema = z.object({
  id: z.number().int(),
  label: z.string(),
  region: z.string(),
  subnets: z.array(subnetSchema).nullish().transform((v) => v ?? []),
});
export const vpcListSchema = envelope(vpcSchema);
