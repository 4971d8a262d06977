// NodeBalancers, their per-port configs, backend nodes, firewalls and statistics.
import type { z } from "zod";
import type { Camelize } from "./case.ts";
import type { CallOptions, Transport } from "./http.ts";
import { listAll, listAllServed, listPage, type ListAllOptions, type ListOptions } from "./listing.ts";
import { MAX_PAGE_SIZE, type Page } from "./pagination.ts";
import { emptySchema } from "./schemas/common.ts";
import {
  firewallListSchema, firewallSchema, nodeBalancerConfigListSchema, nodeBalancerConfigSchema, nodeBalancerListSchema,
  nodeBalancerNodeListSchema, nodeBalancerNodeSchema, nodeBalancerSchema, nodeBalancerStatsSchema, nodeBalancerVpcConfigListSchema, nodeBalancerVpcConfigSchema,
  type nbAlgorithms, type nbChecks, type nbCipherSuites, type nbNodeModes, type nbProtocols, type nbProxyProtocols,
  type nbStickiness,
} from "./schemas/nodebalancers.ts";

export type NodeBalancer = Camelize<z.output<typeof nodeBalancerSchema>>;
export type NodeBalancerConfig = Camelize<z.output<typeof nodeBalancerConfigSchema>>;
export type NodeBalancerNode = Camelize<z.output<typeof nodeBalancerNodeSchema>>;
export type Firewall = Camelize<z.output<typeof firewallSchema>>;
export type NodeBalancerStats = Camelize<z.output<typeof nodeBalancerStatsSchema>>;
export type NodeBalancerVpcConfig = Camelize<z.output<typeof nodeBalancerVpcConfigSchema>>;

type Open<T extends readonly string[]> = T[number] | (string & {});

export interface NodeBalancerNodeInput {
  /** Private IPv4 with port, `ip:port`. */
  address: string;
  label: string;
  weight?: number;
  mode?: Open<typeof nbNodeModes>;
  /** A VPC backend: the NodeBalancer's backend subnet ("Required for VPC backend nodes only"). */
  subnetId?: number;
}

/** A VPC subnet a NodeBalancer's backends (or, premium only, its frontend) are in. */
export interface NodeBalancerVpcInput {
  subnetId: number;
  /** A CIDR inside the subnet, all free; omitted: the API picks a /30 (backend) or an address (frontend). */
  ipv4Range?: string;
}

/** Every writable config field; all optional with the API's defaults. */
export interface NodeBalancerConfigInput {
  port?: number;
  protocol?: Open<typeof nbProtocols>;
  algorithm?: Open<typeof nbAlgorithms>;
  stickiness?: Open<typeof nbStickiness>;
  check?: Open<typeof nbChecks>;
  checkInterval?: number;
  checkTimeout?: number;
  checkAttempts?: number;
  checkPath?: string;
  checkBody?: string;
  checkPassive?: boolean;
  cipherSuite?: Open<typeof nbCipherSuites>;
  proxyProtocol?: Open<typeof nbProxyProtocols>;
  /** PEM; secret, never logged. */
  sslCert?: string | null;
  /** PEM private key; secret, never logged. */
  sslKey?: string | null;
  /** udp only: the backends' health-check port, 1..65535 (the API's default 80). */
  udpCheckPort?: number;
}

export interface NodeBalancerCreateRequest {
  region: string;
  label?: string;
  clientConnThrottle?: number;
  /** udp sessions per second per client IP, 0..20 (LG: "may not currently be available to all users"). */
  clientUdpSessThrottle?: number;
  tags?: string[];
  firewallId?: number;
  /** common (the API's default), premium, premium_40gb. Create-only. */
  type?: string;
  /** A reserved IPv4 address of the account ("an unassigned reserved IP"). Create-only. */
  ipv4?: string;
  /**
   * The backend VPC (one). Sent under the name the public spec documents, `vpcs`, which the
   * API still takes (recorded 2026) and linodego's released versions send; `backend_vpcs` is its
   * newer name.
   */
  vpcs?: NodeBalancerVpcInput[];
  /** The frontend VPC (one; premium types only). */
  frontendVpcs?: NodeBalancerVpcInput[];
  configs?: (NodeBalancerConfigInput & { nodes?: NodeBalancerNodeInput[] })[];
}

export interface NodeBalancerUpdateRequest {
  label?: string;
  clientConnThrottle?: number;
  clientUdpSessThrottle?: number;
  tags?: string[];
}

export interface NodeBalancerFirewallsUpdateRequest {
  /** The complete list of the NodeBalancer's firewalls: any other assignment is removed. */
  firewallIds: number[];
}

export interface NodeBalancerConfigRebuildRequest extends NodeBalancerConfigInput {
  /** The complete node set: nodes with `id` are kept and updated, others created, omitted ones deleted. */
  nodes: (NodeBalancerNodeInput & { id?: number })[];
}

const NB = "/nodebalancers";
const ONE = `${NB}/{nodeBalancerId}`;
const CONFIGS = `${ONE}/configs`;
const CONFIG = `${CONFIGS}/{configId}`;
const NODES = `${CONFIG}/nodes`;
const NODE = `${NODES}/{nodeId}`;

export class NodeBalancersApi {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  list(opts?: ListOptions): Promise<Page<NodeBalancer>> {
    return listPage(this.transport, NB, {}, nodeBalancerListSchema, opts);
  }

  listAll(opts?: ListAllOptions): Promise<NodeBalancer[]> {
    return listAll(this.transport, NB, {}, nodeBalancerListSchema, opts);
  }

  async findByLabel(label: string, opts?: CallOptions): Promise<NodeBalancer | undefined> {
    const found = await this.listAll({ ...opts, filter: { label } });
    return found.find((nb) => nb.label === label);
  }

  get(nodeBalancerId: number, opts?: CallOptions): Promise<NodeBalancer> {
    return this.transport.request({ method: "GET", route: ONE, params: { nodeBalancerId }, schema: nodeBalancerSchema }, opts);
  }

  /** Never retried after an ambiguous failure: look up by label before creating again. */
  create(req: NodeBalancerCreateRequest, opts?: CallOptions): Promise<NodeBalancer> {
    return this.transport.request({ method: "POST", route: NB, body: req, schema: nodeBalancerSchema }, opts);
  }

  update(nodeBalancerId: number, req: NodeBalancerUpdateRequest, opts?: CallOptions): Promise<NodeBalancer> {
    return this.transport.request({ method: "PUT", route: ONE, params: { nodeBalancerId }, body: req, schema: nodeBalancerSchema }, opts);
  }

  delete(nodeBalancerId: number, opts?: CallOptions): Promise<void> {
    return this.transport.request({ method: "DELETE", route: ONE, params: { nodeBalancerId }, schema: emptySchema }, opts);
  }

  listConfigs(nodeBalancerId: number, opts?: ListOptions): Promise<Page<NodeBalancerConfig>> {
    return listPage(this.transport, CONFIGS, { nodeBalancerId }, nodeBalancerConfigListSchema, opts);
  }

  listAllConfigs(nodeBalancerId: number, opts?: ListAllOptions): Promise<NodeBalancerConfig[]> {
    return listAll(this.transport, CONFIGS, { nodeBalancerId }, nodeBalancerConfigListSchema, opts);
  }

  /** Every config, with when the API served the list (its Date header): a read's time on the API's clock, to compare with the NodeBalancer's `updated`. */
  async listAllConfigsServed(nodeBalancerId: number, opts?: ListAllOptions): Promise<{ configs: NodeBalancerConfig[]; servedAt?: number }> {
    const { data, servedAt } = await listAllServed(this.transport, CONFIGS, { nodeBalancerId }, nodeBalancerConfigListSchema, opts);
    return servedAt === undefined ? { configs: data } : { configs: data, servedAt };
  }

  getConfig(nodeBalancerId: number, configId: number, opts?: CallOptions): Promise<NodeBalancerConfig> {
    return this.transport.request({ method: "GET", route: CONFIG, params: { nodeBalancerId, configId }, schema: nodeBalancerConfigSchema }, opts);
  }

  createConfig(nodeBalancerId: number, req: NodeBalancerConfigInput, opts?: CallOptions): Promise<NodeBalancerConfig> {
    return this.transport.request({ method: "POST", route: CONFIGS, params: { nodeBalancerId }, body: req, schema: nodeBalancerConfigSchema }, opts);
  }

  updateConfig(nodeBalancerId: number, configId: number, req: NodeBalancerConfigInput, opts?: CallOptions): Promise<NodeBalancerConfig> {
    return this.transport.request({ method: "PUT", route: CONFIG, params: { nodeBalancerId, configId }, body: req, schema: nodeBalancerConfigSchema }, opts);
  }

  deleteConfig(nodeBalancerId: number, configId: number, opts?: CallOptions): Promise<void> {
    return this.transport.request({ method: "DELETE", route: CONFIG, params: { nodeBalancerId, configId }, schema: emptySchema }, opts);
  }

  /**
   * Replaces the config and its whole node set in one request. Idempotent in effect (the
   * same body converges to the same state), so it is retried like a PUT.
   */
  rebuildConfig(nodeBalancerId: number, configId: number, req: NodeBalancerConfigRebuildRequest, opts?: CallOptions): Promise<NodeBalancerConfig> {
    return this.transport.request({
      method: "POST", route: `${CONFIG}/rebuild`, params: { nodeBalancerId, configId }, body: req, schema: nodeBalancerConfigSchema, idempotent: true,
    }, opts);
  }

  listNodes(nodeBalancerId: number, configId: number, opts?: ListOptions): Promise<Page<NodeBalancerNode>> {
    return listPage(this.transport, NODES, { nodeBalancerId, configId }, nodeBalancerNodeListSchema, opts);
  }

  listAllNodes(nodeBalancerId: number, configId: number, opts?: ListAllOptions): Promise<NodeBalancerNode[]> {
    return listAll(this.transport, NODES, { nodeBalancerId, configId }, nodeBalancerNodeListSchema, opts);
  }

  getNode(nodeBalancerId: number, configId: number, nodeId: number, opts?: CallOptions): Promise<NodeBalancerNode> {
    return this.transport.request({ method: "GET", route: NODE, params: { nodeBalancerId, configId, nodeId }, schema: nodeBalancerNodeSchema }, opts);
  }

  createNode(nodeBalancerId: number, configId: number, req: NodeBalancerNodeInput, opts?: CallOptions): Promise<NodeBalancerNode> {
    return this.transport.request({ method: "POST", route: NODES, params: { nodeBalancerId, configId }, body: req, schema: nodeBalancerNodeSchema }, opts);
  }

  updateNode(nodeBalancerId: number, configId: number, nodeId: number, req: Partial<NodeBalancerNodeInput>, opts?: CallOptions): Promise<NodeBalancerNode> {
    return this.transport.request({ method: "PUT", route: NODE, params: { nodeBalancerId, configId, nodeId }, body: req, schema: nodeBalancerNodeSchema }, opts);
  }

  deleteNode(nodeBalancerId: number, configId: number, nodeId: number, opts?: CallOptions): Promise<void> {
    return this.transport.request({ method: "DELETE", route: NODE, params: { nodeBalancerId, configId, nodeId }, schema: emptySchema }, opts);
  }

  listFirewalls(nodeBalancerId: number, opts?: ListOptions): Promise<Page<Firewall>> {
    return listPage(this.transport, `${ONE}/firewalls`, { nodeBalancerId }, firewallListSchema, opts);
  }

  listAllFirewalls(nodeBalancerId: number, opts?: ListAllOptions): Promise<Firewall[]> {
    return listAll(this.transport, `${ONE}/firewalls`, { nodeBalancerId }, firewallListSchema, opts);
  }

  /**
   * Replaces the NodeBalancer's firewall assignments with `firewallIds` in one request (`[]`
   * removes them all); answers with the firewalls now assigned (the first page, at the largest
   * page size). Newer than the spec's document: Akamai's changelog "April 28, 2025 — Linode
   * Instances and NodeBalancers, added update firewalls", techdocs put-node-balancer-firewalls
   * (linode-cli `nodebalancers firewalls-update`); the answer is parsed as the firewall list of
   * GET .../firewalls (linodego reads its Linode-instance twin the same way). The API keeps
   * one active firewall per NodeBalancer, so a swap is this one call (no moment without one).
   * Retried like any PUT: the same list converges to the same assignments.
   */
  updateFirewalls(nodeBalancerId: number, req: NodeBalancerFirewallsUpdateRequest, opts?: CallOptions): Promise<Page<Firewall>> {
    return this.transport.request({
      method: "PUT", route: `${ONE}/firewalls`, params: { nodeBalancerId }, query: { page_size: MAX_PAGE_SIZE }, body: req, schema: firewallListSchema,
    }, opts);
  }

  /** Its VPC configs, backend and frontend in one list (`purpose`). */
  listAllVpcConfigs(nodeBalancerId: number, opts?: ListAllOptions): Promise<NodeBalancerVpcConfig[]> {
    return listAll(this.transport, `${ONE}/vpcs`, { nodeBalancerId }, nodeBalancerVpcConfigListSchema, opts);
  }

  getVpcConfig(nodeBalancerId: number, vpcConfigId: number, opts?: CallOptions): Promise<NodeBalancerVpcConfig> {
    return this.transport.request({ method: "GET", route: `${ONE}/vpcs/{vpcConfigId}`, params: { nodeBalancerId, vpcConfigId }, schema: nodeBalancerVpcConfigSchema }, opts);
  }

  /** A fresh NodeBalancer answers 400 "Stats are unavailable at this time." (classified precondition). */
  getStats(nodeBalancerId: number, opts?: CallOptions): Promise<NodeBalancerStats> {
    return this.transport.request({ method: "GET", route: `${ONE}/stats`, params: { nodeBalancerId }, schema: nodeBalancerStatsSchema }, opts);
  }
}
