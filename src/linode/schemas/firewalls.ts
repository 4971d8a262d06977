// Cloud Firewall devices: the assignment of a firewall to a NodeBalancer (or a Linode). Not in
// the spec's NodeBalancer document (4.176.0 only lists a NodeBalancer's firewalls); shaped as
// the official OpenAPI document describes them (reference/openapi-subset.json,
// get-firewall-devices / post-firewall-device). No real response is recorded, so every field
// but the ids is tolerated missing.
import { z } from "zod";
import { envelope } from "./common.ts";

export const firewallDeviceSchema = z.object({
  id: z.number().int(),
  entity: z.object({
    id: z.number().int(),
    type: z.string(),
    label: z.string().nullish().transform((v) => v ?? null),
    url: z.string().nullish().transform((v) => v ?? null),
  }),
  created: z.string().nullish().transform((v) => v ?? null),
  updated: z.string().nullish().transform((v) => v ?? null),
});
export const firewallDeviceListSchema = envelope(firewallDeviceSchema);
