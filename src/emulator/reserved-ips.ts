// Reserved public IPv4 addresses (/networking/reserved/ips): what a NodeBalancer's create may
// name in `ipv4` ("an unassigned reserved IP from your account", spec). Reserved from the same
// documentation ranges as every other address here. GUESSES: the reserved address object is
// answered with the fields a NodeBalancer needs and the IP address object's usual ones; deleting
// one only ends the reservation (an assigned address stays with its NodeBalancer).
import { z } from "zod";
import type { RequestContext, Route } from "./context.ts";
import { notFound } from "./errors.ts";
import { documentationIPv4 } from "./ip.ts";
import { checkRegion } from "./nodebalancers/model.ts";
import { pageRequest, paginate } from "./pagination.ts";
import { nextId, type NodeBalancerRecord, type ReservedIpRecord } from "./store.ts";
import { parseBody } from "./validation.ts";

const reserveSchema = z.object({ region: z.string({ error: (i) => (i.input === undefined ? "region is required" : "Must be a string") }) });

const holder = (req: RequestContext, address: string): NodeBalancerRecord | undefined =>
  [...req.ctx.state.nodebalancers.values()].find((nb) => nb.ipv4 === address);

function render(req: RequestContext, r: ReservedIpRecord): Record<string, unknown> {
  const nb = holder(req, r.address);
  return {
    address: r.address, gateway: null, subnet_mask: "255.255.255.0", prefix: 24, type: "ipv4", public: true, rdns: null,
    linode_id: null, region: r.region, reserved: true, tags: [],
    assigned_entity: nb === undefined ? null : { id: nb.id, label: nb.label, type: "nodebalancer", url: `/v4/nodebalancers/${String(nb.id)}` },
  };
}

/** The reserved address `address` of the account if it is in `region` and no NodeBalancer holds it. */
export function freeReservedIp(req: RequestContext, address: string, region: string): ReservedIpRecord | undefined {
  const r = req.ctx.state.reservedIps.get(address);
  return r !== undefined && r.region === region && holder(req, address) === undefined ? r : undefined;
}

export function reservedIpRoutes(): Route[] {
  const one = "/networking/reserved/ips/{address}";
  const load = (req: RequestContext): ReservedIpRecord => {
    const r = req.ctx.state.reservedIps.get(req.params.address ?? "");
    if (r === undefined) throw notFound();
    return r;
  };
  return [
    {
      method: "GET", template: "/networking/reserved/ips", area: "ips", level: "read_only", paginated: true,
      handler: (req) => ({ body: paginate([...req.ctx.state.reservedIps.values()], pageRequest(req.query), (r) => render(req, r)) }),
    },
    {
      method: "POST", template: "/networking/reserved/ips", area: "ips", level: "read_write",
      handler: (req) => {
        const input = parseBody(reserveSchema, req.body);
        checkRegion(input.region);
        const r = { address: documentationIPv4(nextId(req.ctx.state, "address")), region: input.region, created: req.ctx.clock.now() };
        req.ctx.state.reservedIps.set(r.address, r);
        return { body: render(req, r) };
      },
    },
    { method: "GET", template: one, area: "ips", level: "read_only", handler: (req) => ({ body: render(req, load(req)) }) },
    {
      method: "DELETE", template: one, area: "ips", level: "read_write",
      handler: (req) => { req.ctx.state.reservedIps.delete(load(req).address); return { body: {} }; },
    },
  ];
}
