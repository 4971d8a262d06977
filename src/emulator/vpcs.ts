// VPCs and their subnets, as far as NodeBalancers need them: made, listed, read and deleted
// through the API's /vpcs routes (a VPC is an account object; a NodeBalancer's VPC subnet must
// exist in its region). Linodes and their interfaces are not emulated. GUESSES (nothing recorded
// here): a subnet's `ipv4` must be an RFC 1918 CIDR of /8../29 not overlapping another subnet of
// the VPC ("Subnet overlaps with another subnet in this VPC", field subnets[i].ipv4); deleting a
// VPC whose subnet a NodeBalancer uses is refused (CL25: "neither the VPC nor the subnet can be
// deleted unless they are first removed from the NodeBalancer"), 400 "VPC is in use by a
// NodeBalancer".
import { z } from "zod";
import { apiTime } from "./clock.ts";
import { checkRegion } from "./nodebalancers/model.ts";
import type { RequestContext, Route } from "./context.ts";
import { ApiError, badRequest, notFound } from "./errors.ts";
import { applyFilter, type Filterable } from "./filter.ts";
import { cidrsOverlap, isPrivateIPv4, parseCidr4 } from "./ip.ts";
import { pageRequest, paginate } from "./pagination.ts";
import { intParam } from "./router.ts";
import { nextId, type SubnetRecord, type VpcRecord } from "./store.ts";
import { label, parseBody } from "./validation.ts";

const vpcLabel = label(1, 64, /^[a-zA-Z0-9-]+$/).refine((l) => !l.includes("--"), { error: "Must not contain two dashes in a row" });
const subnetSchema = z.object({ label: vpcLabel, ipv4: z.string({ error: "Must be a string" }) });
const vpcCreateSchema = z.object({
  label: vpcLabel,
  region: z.string({ error: (i) => (i.input === undefined ? "region is required" : "Must be a string") }),
  description: z.string().max(255).nullish(),
  subnets: z.array(subnetSchema).nullish(),
});

const FILTERS: Filterable = { label: (v: VpcRecord) => v.label, region: (v: VpcRecord) => v.region };
const SUBNET_FILTERS: Filterable = { label: (s: SubnetRecord) => s.label };

export const renderSubnet = (s: SubnetRecord): Record<string, unknown> => ({
  id: s.id, label: s.label, ipv4: s.ipv4, ipv6: null, linodes: [], created: apiTime(s.created), updated: apiTime(s.updated),
});

const renderVpc = (v: VpcRecord): Record<string, unknown> => ({
  id: v.id, label: v.label, description: v.description, region: v.region, subnets: v.subnets.map(renderSubnet),
  created: apiTime(v.created), updated: apiTime(v.updated),
});

/** The subnet with this id in the account, with its VPC. */
export function findSubnet(req: RequestContext, subnetId: number): { vpc: VpcRecord; subnet: SubnetRecord } | undefined {
  for (const vpc of req.ctx.state.vpcs.values()) {
    const subnet = vpc.subnets.find((s) => s.id === subnetId);
    if (subnet !== undefined) return { vpc, subnet };
  }
  return undefined;
}

function addSubnet(req: RequestContext, vpc: VpcRecord, input: z.infer<typeof subnetSchema>, prefix: string): SubnetRecord {
  const range = parseCidr4(input.ipv4);
  if (range === null || range.size < 8 || range.size > 2 ** 24 || !isPrivateIPv4(range.start) || !isPrivateIPv4(range.start + range.size - 1)) {
    throw badRequest("Must be an RFC 1918 IPv4 range between /8 and /29, e.g. 10.0.0.0/24", `${prefix}ipv4`);
  }
  if (vpc.subnets.some((s) => { const other = parseCidr4(s.ipv4); return other !== null && cidrsOverlap(other, range); })) {
    throw badRequest("Subnet overlaps with another subnet in this VPC", `${prefix}ipv4`);
  }
  if (vpc.subnets.some((s) => s.label === input.label)) throw badRequest("Label must be unique among the VPC's subnets", `${prefix}label`);
  const now = req.ctx.clock.now();
  const subnet = { id: nextId(req.ctx.state, "subnet"), label: input.label, ipv4: input.ipv4, created: now, updated: now };
  vpc.subnets.push(subnet);
  return subnet;
}

function load(req: RequestContext): VpcRecord {
  const vpc = req.ctx.state.vpcs.get(intParam(req.params, "vpcId"));
  if (vpc === undefined) throw notFound();
  return vpc;
}

const inUse = (req: RequestContext, subnetIds: readonly number[]): boolean =>
  [...req.ctx.state.nodebalancers.values()].some((nb) => (nb.vpcs ?? []).some((c) => subnetIds.includes(c.subnet_id)));

export function vpcRoutes(): Route[] {
  const one = "/vpcs/{vpcId}";
  return [
    {
      method: "GET", template: "/vpcs", area: "vpc", level: "read_only", paginated: true,
      handler: (req) => ({ body: paginate(applyFilter([...req.ctx.state.vpcs.values()], req.header("x-filter"), FILTERS), pageRequest(req.query), renderVpc) }),
    },
    {
      method: "POST", template: "/vpcs", area: "vpc", level: "read_write",
      handler: (req) => {
        const input = parseBody(vpcCreateSchema, req.body);
        checkRegion(input.region);
        if ([...req.ctx.state.vpcs.values()].some((v) => v.label === input.label)) throw badRequest("Label must be unique", "label");
        const now = req.ctx.clock.now();
        const vpc: VpcRecord = { id: nextId(req.ctx.state, "vpc"), label: input.label, description: input.description ?? "", region: input.region, subnets: [], created: now, updated: now };
        (input.subnets ?? []).forEach((s, i) => addSubnet(req, vpc, s, `subnets[${String(i)}].`));
        req.ctx.state.vpcs.set(vpc.id, vpc);
        return { body: renderVpc(vpc) };
      },
    },
    { method: "GET", template: one, area: "vpc", level: "read_only", handler: (req) => ({ body: renderVpc(load(req)) }) },
    {
      method: "DELETE", template: one, area: "vpc", level: "read_write",
      handler: (req) => {
        const vpc = load(req);
        if (inUse(req, vpc.subnets.map((s) => s.id))) throw new ApiError(400, [{ reason: "VPC is in use by a NodeBalancer" }]);
        req.ctx.state.vpcs.delete(vpc.id);
        return { body: {} };
      },
    },
    {
      method: "GET", template: `${one}/subnets`, area: "vpc", level: "read_only", paginated: true,
      handler: (req) => ({ body: paginate(applyFilter(load(req).subnets, req.header("x-filter"), SUBNET_FILTERS), pageRequest(req.query), renderSubnet) }),
    },
    {
      method: "POST", template: `${one}/subnets`, area: "vpc", level: "read_write",
      handler: (req) => {
        const vpc = load(req);
        return { body: renderSubnet(addSubnet(req, vpc, parseBody(subnetSchema, req.body), "")) };
      },
    },
    {
      method: "GET", template: `${one}/subnets/{subnetId}`, area: "vpc", level: "read_only",
      handler: (req) => {
        const subnet = load(req).subnets.find((s) => s.id === intParam(req.params, "subnetId"));
        if (subnet === undefined) throw notFound();
        return { body: renderSubnet(subnet) };
      },
    },
  ];
}
