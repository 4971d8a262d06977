// NodeBalancers in VPCs (spec 4.234.0, linodego's recordings, CL25, CL26: nodebalancers/facts.md): the backend VPC (`vpcs`, its newer name
// `backend_vpcs`) and the premium-only frontend VPC on create, the VPC configs they make
// (GET /nodebalancers/{id}/vpcs), and the rules for nodes: a VPC node names the backend subnet
// and has an address inside it; premium takes no legacy private IPv4 backend (CL26); per-config
// node limits (1,000 common, 2,000 premium: CL26, TD).
//
// Recorded: `frontend_vpcs` on a common NodeBalancer is 400 "NodeBalancer with frontend VPC IP
// must be premium" (no field); an IPv6 range on a subnet without IPv6 is 400 "No IPv6 subnets
// available in VPC." (field `frontend_vpcs[0].ipv6_range`); an omitted backend range becomes a
// /30 the API picks (recorded `192.168.0.4/30`); a frontend range gives the NodeBalancer the
// range's first address after the subnet's network and gateway (`192.168.0.0/25` → `192.168.0.2`,
// config `192.168.0.2/32`); a VPC node answers `vpc_config_id`, the id of the backend config.
// GUESSES (no recording; reasons and fields are this file's): every other refusal below; that
// emulated subnets have no IPv6 (so any `ipv6_range` is refused as recorded); that the backend
// /30 is the first free one from the subnet's fifth address; `backend_connectivity` is "vpc"
// with any VPC config (recorded, also for a frontend-only NodeBalancer) and null otherwise (the
// other values are not known).
import { z } from "zod";
import type { RequestContext } from "../context.ts";
import { ApiError, badRequest } from "../errors.ts";
import { cidrContains, cidrsOverlap, formatIPv4, parseCidr4, parseIPv4 } from "../ip.ts";
import { freeReservedIp } from "../reserved-ips.ts";
import { nextId, type NodeBalancerRecord, type NodeBalancerVpcRecord } from "../store.ts";
import { findSubnet } from "../vpcs.ts";

export const NODEBALANCER_TYPES = ["common", "premium", "premium_40gb"] as const;

const positiveId = z.number({ error: "Must be an integer" }).int({ error: "Must be an integer" }).positive({ error: "Must be a positive integer" });
const vpcItem = z.object({
  subnet_id: z.number({ error: (i) => (i.input === undefined ? "subnet_id is required" : "Must be an integer") }).int().positive(),
  ipv4_range: z.string({ error: "Must be a string" }).nullish(),
  ipv6_range: z.string({ error: "Must be a string" }).nullish(),
  ipv4_range_auto_assign: z.boolean({ error: "Must be a boolean" }).nullish(),
});
const vpcList = z.array(vpcItem, { error: "Must be an array" }).nullish();

/** The create body's VPC and address fields (merged into nodeBalancerCreateSchema). */
export const nodeBalancerVpcFields = {
  vpcs: vpcList,
  backend_vpcs: vpcList,
  frontend_vpcs: vpcList,
  ipv4: z.string({ error: "Must be a string" }).nullish(),
};

/** A node's `subnet_id` (create, update, rebuild). */
export const nodeSubnetField = { subnet_id: positiveId.nullish() };

type VpcItem = z.infer<typeof vpcItem>;
interface VpcInput { vpcs?: VpcItem[] | null | undefined; backend_vpcs?: VpcItem[] | null | undefined; frontend_vpcs?: VpcItem[] | null | undefined; ipv4?: string | null | undefined }

export const isPremium = (nb: NodeBalancerRecord): boolean => nb.type !== "common";
export const nodeLimit = (nb: NodeBalancerRecord): number => (isPremium(nb) ? 2000 : 1000);

const backendOf = (nb: NodeBalancerRecord): NodeBalancerVpcRecord | undefined => (nb.vpcs ?? []).find((c) => c.purpose === "backend");
export const frontendOf = (nb: NodeBalancerRecord): NodeBalancerVpcRecord | undefined => (nb.vpcs ?? []).find((c) => c.purpose === "frontend");

/** Ranges other NodeBalancers' configs (and this one's so far) use on a subnet. */
function taken(req: RequestContext, subnetId: number, mine: readonly NodeBalancerVpcRecord[]): { start: number; size: number }[] {
  const all = [...[...req.ctx.state.nodebalancers.values()].flatMap((nb) => nb.vpcs ?? []), ...mine];
  return all.filter((c) => c.subnet_id === subnetId).flatMap((c) => { const r = parseCidr4(c.ipv4_range); return r === null ? [] : [r]; });
}

/** The first block of `size` addresses inside `within`, from `from` on, that overlaps nothing taken. */
function firstFree(within: { start: number; size: number }, from: number, size: number, used: readonly { start: number; size: number }[]): { start: number; size: number } | undefined {
  for (let start = Math.ceil(Math.max(within.start, from) / size) * size; start + size <= within.start + within.size; start += size) {
    const block = { start, size };
    if (!used.some((u) => cidrsOverlap(u, block))) return block;
  }
  return undefined;
}

const cidr = (b: { start: number; size: number }): string => `${formatIPv4(b.start)}/${String(32 - Math.log2(b.size))}`;

function attach(req: RequestContext, nb: NodeBalancerRecord, item: VpcItem, purpose: "frontend" | "backend", field: string, made: NodeBalancerVpcRecord[]): NodeBalancerVpcRecord {
  const found = findSubnet(req, item.subnet_id);
  if (found === undefined) throw badRequest("Subnet not found", `${field}.subnet_id`);
  if (found.vpc.region !== nb.region) throw badRequest("The subnet must be in the NodeBalancer's region", `${field}.subnet_id`);
  if (item.ipv6_range != null) throw badRequest("No IPv6 subnets available in VPC.", `${field}.ipv6_range`);
  const subnet = parseCidr4(found.subnet.ipv4);
  if (subnet === null) throw new ApiError(500, [{ reason: "subnet range unreadable" }]);
  const given = item.ipv4_range == null ? undefined : parseCidr4(item.ipv4_range);
  if (given === null || (given !== undefined && !cidrContains(subnet, given))) throw badRequest("Must be an IPv4 range inside the subnet's range", `${field}.ipv4_range`);
  const used = taken(req, item.subnet_id, made);
  const within = given ?? subnet;
  // The subnet's network address and gateway are never handed out.
  const block = purpose === "frontend"
    ? firstFree(within, subnet.start + 2, 1, used)
    : given !== undefined && item.ipv4_range_auto_assign !== true
      ? (used.some((u) => cidrsOverlap(u, given)) ? undefined : given)
      : firstFree(within, subnet.start + 4, 4, used);
  if (block === undefined) throw badRequest("No free IPv4 range available in the subnet", `${field}.ipv4_range`);
  return { id: nextId(req.ctx.state, "nodebalancer_vpc"), vpc_id: found.vpc.id, subnet_id: item.subnet_id, ipv4_range: cidr(block), ipv6_range: null, purpose };
}

/**
 * Checks the create body's type, VPCs and reserved address, and gives `nb` its VPC configs and
 * address; throws before anything is kept.
 */
export function applyVpcsAndAddress(req: RequestContext, nb: NodeBalancerRecord, input: VpcInput): void {
  if (input.frontend_vpcs != null && input.frontend_vpcs.length > 0 && !isPremium(nb)) {
    throw new ApiError(400, [{ reason: "NodeBalancer with frontend VPC IP must be premium" }]);
  }
  if (input.vpcs != null && input.backend_vpcs != null) throw badRequest("Only one of vpcs and backend_vpcs may be given", "backend_vpcs");
  const backendName = input.backend_vpcs != null ? "backend_vpcs" : "vpcs";
  const backends = input.backend_vpcs ?? input.vpcs ?? [];
  const fronts = input.frontend_vpcs ?? [];
  // S: "You can have only one `vpcs`"; one frontend likewise.
  if (backends.length > 1) throw badRequest("Only one VPC may be given", backendName);
  if (fronts.length > 1) throw badRequest("Only one VPC may be given", "frontend_vpcs");
  const made: NodeBalancerVpcRecord[] = [];
  fronts.forEach((f, i) => made.push(attach(req, nb, f, "frontend", `frontend_vpcs[${String(i)}]`, made)));
  backends.forEach((b, i) => made.push(attach(req, nb, b, "backend", `${backendName}[${String(i)}]`, made)));
  if (input.ipv4 != null) {
    if (made.some((c) => c.purpose === "frontend")) throw badRequest("ipv4 cannot be given with a frontend VPC", "ipv4");
    if (freeReservedIp(req, input.ipv4, nb.region) === undefined) throw badRequest("Must be an unassigned reserved IPv4 address of the account in the NodeBalancer's region", "ipv4");
    nb.ipv4 = input.ipv4;
  }
  const front = made.find((c) => c.purpose === "frontend");
  if (front !== undefined) nb.ipv4 = front.ipv4_range.split("/")[0] ?? nb.ipv4;
  nb.vpcs = made;
}

/**
 * Where node `address` (ip:port) of `nb` stands: its subnet and VPC config when it names one
 * (it must be the backend subnet, the address inside it); none otherwise, which a NodeBalancer
 * with VPC backends or a premium one refuses.
 */
export function placeNode(nb: NodeBalancerRecord, address: string, subnetId: number | null | undefined, prefix: string): { subnet_id?: number; vpc_config_id?: number } {
  const backend = backendOf(nb);
  if (address.startsWith("[")) {
    // A public IPv6 backend, on common and premium alike (CL26), is not a VPC node: spec 4.234.0
    // gives VPC nodes IPv4 addresses and CCM sends no subnet (nor a backend VPC) with IPv6 ones.
    // GUESSES (facts.md): refusing a subnet_id with it, and refusing it on a NodeBalancer with a
    // backend VPC (CL25: "either VPC or non-VPC backends nodes"); statuses and texts are the emulator's.
    if (subnetId != null) throw badRequest("An IPv6 backend is not in a VPC: it takes no subnet_id", `${prefix}subnet_id`);
    if (backend !== undefined) throw badRequest("This NodeBalancer's backends are in a VPC: it takes no IPv6 backends", `${prefix}address`);
    return {};
  }
  if (subnetId == null) {
    if (backend !== undefined) throw badRequest("subnet_id is required: this NodeBalancer's backends are in a VPC", `${prefix}subnet_id`);
    if (isPremium(nb)) throw badRequest("A premium NodeBalancer takes VPC or public IPv6 backends only, not private IPv4 addresses", `${prefix}address`);
    return {};
  }
  if (backend?.subnet_id !== subnetId) throw badRequest("Must be the subnet of the NodeBalancer's backend VPC", `${prefix}subnet_id`);
  return { subnet_id: subnetId, vpc_config_id: backend.id };
}

/** Whether `address` (ip:port) lies in subnet `subnetId`'s range; checked by the routes, which know the account. */
export function checkInSubnet(req: RequestContext, address: string, subnetId: number | undefined, field: string): void {
  if (subnetId === undefined) return;
  const range = parseCidr4(findSubnet(req, subnetId)?.subnet.ipv4 ?? "");
  const ip = parseIPv4(address.split(":")[0] ?? "");
  if (range === null || ip === null || ip < range.start || ip >= range.start + range.size) throw badRequest("Must be an address inside the subnet's IPv4 range", field);
}

export function checkNodeLimit(nb: NodeBalancerRecord, count: number, field: string): void {
  if (count > nodeLimit(nb)) throw badRequest(`A config may have at most ${String(nodeLimit(nb))} nodes on a ${nb.type} NodeBalancer`, field);
}

export const renderVpcConfig = (nb: NodeBalancerRecord, c: NodeBalancerVpcRecord): Record<string, unknown> => ({
  id: c.id, nodebalancer_id: nb.id, vpc_id: c.vpc_id, subnet_id: c.subnet_id, ipv4_range: c.ipv4_range, ipv6_range: c.ipv6_range, purpose: c.purpose,
});

/** The read-only fields the VPCs add to a NodeBalancer. */
export function vpcFieldsOf(nb: NodeBalancerRecord): Record<string, unknown> {
  const front = frontendOf(nb);
  return {
    backend_connectivity: (nb.vpcs ?? []).length > 0 ? "vpc" : null,
    frontend_address_type: front !== undefined ? "vpc" : "public",
    frontend_vpc_subnet_id: front?.subnet_id ?? null,
  };
}
