// A NodeBalancer in VPCs: the subnets spec.vpcs and spec.frontendVpc name (by id, or by the
// labels of a VPC and its subnet, as the cloud controller manager's annotations do), found in
// the account's VPC list; what the create sends for them; and how the cloud's VPC configs,
// type and address compare with the spec. Every one of these is create-only (spec: the VPC cannot change; Terraform replaces):
// a difference is named, never sent.
import type { NodeBalancerVpcConfig, NodeBalancerVpcInput, Vpc } from "../../linode/index.ts";
import { inCidr, type BackendSubnet } from "./backends-from.ts";
import type { ObservedNodeBalancer } from "./diff.ts";
import type { NodeBalancerSpec } from "./schema.ts";

export interface SubnetRef {
  subnetId?: number | undefined;
  vpcLabel?: string | undefined;
  subnetLabel?: string | undefined;
  ipv4Range?: string | undefined;
}

/** A subnet the account has. */
export interface FoundSubnet {
  id: number;
  vpcId: number;
  region: string;
  /** Its IPv4 range, or null. */
  range: string | null;
}

/**
 * The account's VPCs with their subnets: one list (every page) serves every NodeBalancer of the
 * account for `maxAgeMillis`; concurrent callers share one read. A subnet not found in a list
 * older than `missAgeMillis` is looked for in a fresh one (a VPC made a moment ago).
 */
export class VpcCatalog {
  private readonly listAll: (signal: AbortSignal) => Promise<Vpc[]>;
  private snapshot: { at: number; vpcs: Vpc[] } | undefined;
  private inflight: Promise<Vpc[]> | undefined;

  constructor(listAll: (signal: AbortSignal) => Promise<Vpc[]>) {
    this.listAll = listAll;
  }

  async find(ref: SubnetRef, maxAgeMillis: number, missAgeMillis: number, signal: AbortSignal): Promise<FoundSubnet | undefined> {
    const found = findIn(await this.vpcs(maxAgeMillis, signal), ref);
    if (found !== undefined || (this.snapshot !== undefined && Date.now() - this.snapshot.at <= missAgeMillis)) return found;
    return findIn(await this.vpcs(0, signal), ref);
  }

  /** Subnet `id`'s range, from a list at most `maxAgeMillis` old (null: not found, or none). */
  async rangeOf(id: number, maxAgeMillis: number, signal: AbortSignal): Promise<string | null> {
    return (await this.find({ subnetId: id }, maxAgeMillis, maxAgeMillis, signal))?.range ?? null;
  }

  private async vpcs(maxAgeMillis: number, signal: AbortSignal): Promise<Vpc[]> {
    if (this.snapshot !== undefined && Date.now() - this.snapshot.at <= maxAgeMillis && maxAgeMillis > 0) return this.snapshot.vpcs;
    this.inflight ??= this.listAll(signal).then((vpcs) => {
      this.snapshot = { at: Date.now(), vpcs };
      return vpcs;
    }).finally(() => { this.inflight = undefined; });
    return this.inflight;
  }
}

function findIn(vpcs: readonly Vpc[], ref: SubnetRef): FoundSubnet | undefined {
  for (const vpc of vpcs) {
    if (ref.subnetId === undefined && vpc.label !== ref.vpcLabel) continue;
    const subnet = vpc.subnets.find((s) => (ref.subnetId !== undefined ? s.id === ref.subnetId : s.label === ref.subnetLabel));
    if (subnet !== undefined) return { id: subnet.id, vpcId: vpc.id, region: vpc.region, range: subnet.ipv4 };
  }
  return undefined;
}

/** How the spec names a subnet, for messages. */
export const refText = (r: SubnetRef): string => (r.subnetId !== undefined ? `subnet ${String(r.subnetId)}` : `subnet ${r.subnetLabel ?? ""} of VPC ${r.vpcLabel ?? ""}`);

/** The subnets the spec names, as found (or why one is not usable: none such, another region). */
export interface SpecSubnets {
  backend?: FoundSubnet;
  frontend?: FoundSubnet;
  problems: string[];
}

/** Finds what the spec names; `labelsOnly`: refs by id are taken as they are, unread (their range unknown). */
export async function findSpecSubnets(spec: NodeBalancerSpec, catalog: VpcCatalog, maxAgeMillis: number, missAgeMillis: number, signal: AbortSignal, labelsOnly = false): Promise<SpecSubnets> {
  const out: SpecSubnets = { problems: [] };
  const look = async (ref: SubnetRef | undefined, field: string): Promise<FoundSubnet | undefined> => {
    if (ref === undefined) return undefined;
    if (labelsOnly && ref.subnetId !== undefined) return { id: ref.subnetId, vpcId: 0, region: spec.region, range: null };
    const found = await catalog.find(ref, maxAgeMillis, missAgeMillis, signal);
    if (found === undefined) out.problems.push(`${field} names ${refText(ref)}, which the Linode account has not`);
    else if (found.region !== spec.region) out.problems.push(`${field} names ${refText(ref)}, which is in region ${found.region}, not ${spec.region}`);
    else return found;
    return undefined;
  };
  const backend = await look(spec.vpcs?.[0], "spec.vpcs");
  const frontend = await look(spec.frontendVpc, "spec.frontendVpc");
  return { ...out, ...(backend !== undefined ? { backend } : {}), ...(frontend !== undefined ? { frontend } : {}) };
}

/** What the create sends for a subnet the spec names. */
export const vpcInput = (found: FoundSubnet, ref: SubnetRef): NodeBalancerVpcInput => ({ subnetId: found.id, ...(ref.ipv4Range !== undefined ? { ipv4Range: ref.ipv4Range } : {}) });

/** What naming these account objects is called in a refusal (as the spec gives them, nothing of what exists). */
export function namedAccountObjects(spec: NodeBalancerSpec): string | undefined {
  const parts = [
    ...(spec.vpcs?.[0] !== undefined ? [`joining ${refText(spec.vpcs[0])} (spec.vpcs)`] : []),
    ...(spec.frontendVpc !== undefined ? [`joining ${refText(spec.frontendVpc)} (spec.frontendVpc)`] : []),
    ...(spec.ipv4 !== undefined ? [`taking the reserved address ${spec.ipv4} (spec.ipv4)`] : []),
  ];
  return parts.length > 0 ? parts.join(" and ") : undefined;
}

export const backendConfig = (vpcs: readonly NodeBalancerVpcConfig[]): NodeBalancerVpcConfig | undefined => vpcs.find((v) => v.purpose === "backend");
export const frontendConfig = (vpcs: readonly NodeBalancerVpcConfig[]): NodeBalancerVpcConfig | undefined => vpcs.find((v) => v.purpose === "frontend");

/** The NodeBalancer's backend subnet, for its nodes. */
export const backendSubnetOf = (vpcs: readonly NodeBalancerVpcConfig[], range: string | null): BackendSubnet | undefined => {
  const b = backendConfig(vpcs);
  return b === undefined ? undefined : { id: b.subnetId, range };
};

/** Whether the cloud's range (an allocation) lies inside the spec's (the range it was taken from). */
function rangeFits(spec: string | undefined, cloud: string | null | undefined): boolean {
  if (spec === undefined) return true;
  if (cloud === null || cloud === undefined) return false;
  const [base = "", bits = "32"] = cloud.split("/");
  const [, specBits = "32"] = spec.split("/");
  return inCidr(base, spec) && Number(bits) >= Number(specBits);
}

function vpcMismatch(field: string, ref: SubnetRef | undefined, found: FoundSubnet | undefined, cloud: NodeBalancerVpcConfig | undefined): string | undefined {
  const has = cloud === undefined ? "none" : `subnet ${String(cloud.subnetId)}${cloud.ipv4Range !== null && cloud.ipv4Range !== undefined ? ` (${cloud.ipv4Range})` : ""}`;
  if (ref === undefined) return cloud === undefined ? undefined : `${field} (spec none, NodeBalancer ${has})`;
  // A subnet the spec names by label that is not there now: what the NodeBalancer has cannot be compared (the problem says so).
  if (found === undefined) return undefined;
  if (cloud?.subnetId !== found.id || !rangeFits(ref.ipv4Range, cloud.ipv4Range)) return `${field} (spec ${refText(ref)}${ref.ipv4Range !== undefined ? ` ${ref.ipv4Range}` : ""}, NodeBalancer ${has})`;
  return undefined;
}

/** The create-only fields the NodeBalancer has otherwise than the spec says: each named. */
export function createOnlyMismatches(spec: NodeBalancerSpec, observed: ObservedNodeBalancer, found: SpecSubnets): string[] {
  const { nb, vpcs } = observed;
  return [
    ...(nb.type !== undefined && nb.type !== spec.type ? [`type (spec ${spec.type}, NodeBalancer ${nb.type})`] : []),
    ...[vpcMismatch("vpcs", spec.vpcs?.[0], found.backend, backendConfig(vpcs)), vpcMismatch("frontendVpc", spec.frontendVpc, found.frontend, frontendConfig(vpcs))].filter((m) => m !== undefined),
    ...(spec.ipv4 !== undefined && nb.ipv4 !== spec.ipv4 ? [`ipv4 (spec ${spec.ipv4}, NodeBalancer ${nb.ipv4 ?? "none"})`] : []),
  ];
}

/** The adopted NodeBalancer's type and VPCs as the spec writes them. */
/**
 * What an adopted NodeBalancer's VPC configs have that the spec cannot say: an IPv6 range (the
 * spec offers none yet). Nothing would be sent for it (VPCs are create-only), but a recreate from
 * the spec would make a NodeBalancer without it, so adoption in Manage mode names it instead.
 */
export function vpcsInexpressible(o: ObservedNodeBalancer): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, c] of [["vpcs", backendConfig(o.vpcs)], ["frontendVpc", frontendConfig(o.vpcs)]] as const) {
    if (c?.ipv6Range !== null && c?.ipv6Range !== undefined && c.ipv6Range !== "") out[field] = `its ${c.purpose} VPC config (subnet ${String(c.subnetId)}) has the IPv6 range ${c.ipv6Range}, which the spec cannot say yet (a NodeBalancer made from it would have none)`;
  }
  return out;
}

export function vpcsAsSpec(o: ObservedNodeBalancer): Record<string, unknown> {
  const back = backendConfig(o.vpcs);
  const front = frontendConfig(o.vpcs);
  const ref = (c: NodeBalancerVpcConfig) => ({ subnetId: c.subnetId, ...(c.ipv4Range !== null && c.ipv4Range !== undefined ? { ipv4Range: c.ipv4Range } : {}) });
  return {
    ...(o.nb.type !== undefined ? { type: o.nb.type } : {}),
    ...(back !== undefined ? { vpcs: [ref(back)] } : {}),
    ...(front !== undefined ? { frontendVpc: ref(front) } : {}),
  };
}
