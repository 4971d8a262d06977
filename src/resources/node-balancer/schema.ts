// NodeBalancer: a load balancer with its per-port configs and backend nodes inline. One
// source of truth for the CRD and the controller (zod defaults = CRD defaults = the API's
// config defaults, so an applied object shows what the API will use).
import { z } from "zod";
import { immutable, immutableOnceSet, initializedOnAdoption } from "../../runtime/contract.ts";
import {
  accountRecordSchema, externalIdProofSchema, credentialsRefSchema, deletionPolicySchema, linodeIdSchema, linodeSlugSchema, localObjectRefSchema, managementPolicySchema, recreateRecordSchema,
  requestTokenSchema,
} from "../shared/schema.ts";
import { labelSelectorSchema } from "../shared/label-selector.ts";
import { backendAddressProblem } from "./addresses.ts";

export const nodeBalancerProtocols = ["http", "https", "tcp", "udp"] as const;
// udp has algorithms and stickiness of its own (ring_hash; session, source_ip), tcp/http/https
// theirs (source; table, http_cookie): the CEL rules below keep each to its protocol (spec 4.234.0).
export const nodeBalancerAlgorithms = ["roundrobin", "leastconn", "source", "ring_hash"] as const;
export const nodeBalancerStickiness = ["none", "table", "http_cookie", "session", "source_ip"] as const;
export const nodeBalancerChecks = ["none", "connection", "http", "http_body"] as const;
export const nodeBalancerCipherSuites = ["recommended", "legacy"] as const;
export const nodeBalancerProxyProtocols = ["none", "v1", "v2"] as const;
export const nodeModes = ["accept", "reject", "drain", "backup"] as const;
/** The API's NodeBalancer types: common (the default), premium, premium_40gb (linodego, CCM; the spec lags with two). */
export const nodeBalancerTypes = ["common", "premium", "premium_40gb"] as const;

const cidr4 = z.string().max(18).meta({
  "x-kubernetes-validations": [{ rule: "isCIDR(self) && cidr(self).ip().family() == 4", message: "must be an IPv4 CIDR, e.g. 10.0.0.4/30" }],
});

/**
 * A VPC subnet, named as the cloud controller manager's annotations name one: by id
 * (backend-subnet-id), or by the labels of its VPC and of the subnet (vpc-name, subnet-name).
 */
const subnetRefFields = {
  subnetId: linodeIdSchema.optional().meta({ description: "The subnet's id." }),
  vpcLabel: z.string().min(1).max(64).optional().meta({ description: "The VPC's label (with subnetLabel, instead of subnetId)." }),
  subnetLabel: z.string().min(1).max(64).optional().meta({ description: "The subnet's label in that VPC (with vpcLabel, instead of subnetId)." }),
};
const oneSubnetRef = { rule: "has(self.subnetId) != (has(self.vpcLabel) && has(self.subnetLabel)) && has(self.vpcLabel) == has(self.subnetLabel)", message: "name the subnet by subnetId, or by vpcLabel and subnetLabel together" };

export const backendVpcSchema = z.object({
  ...subnetRefFields,
  ipv4Range: cidr4.optional().meta({ description: "The NodeBalancer's addresses in the subnet: a CIDR inside it, all free (the API asks for a /30 for high availability). Unset: the API picks a /30." }),
}).meta({ description: "The VPC subnet the backends are in.", "x-kubernetes-validations": [oneSubnetRef] });

export const frontendVpcSchema = z.object({
  ...subnetRefFields,
  ipv4Range: cidr4.optional().meta({ description: "The range the NodeBalancer's frontend address is taken from (inside the subnet). Unset: the API picks one." }),
}).meta({ description: "The VPC subnet the frontend address is in.", "x-kubernetes-validations": [oneSubnetRef] });

/** The host part of `ip:port` and of `[ip]:port`, for the CEL rules below. */
const host = "self.split(':')[0]";
const host6 = "self.substring(1, self.indexOf(']'))";
const port = "int(self.substring(self.lastIndexOf(':') + 1))";

export const nodeBalancerNodeSchema = z.object({
  label: z.string().min(3).max(32).regex(/^[a-zA-Z0-9_.-]+$/).meta({
    description: "Display label of the backend: 3..32 letters, digits, '-', '_' or '.'.",
  }),
  // No minLength: a too-short address gets the CEL rule's clearer message. 47: a bracketed
  // IPv6 address (39) and a port. The zod check is the CEL rules' twin (parseBackendAddress).
  address: z.string().max(47).refine((a) => backendAddressProblem(a) === undefined, { message: "address must be a private IPv4 address and port, or a public IPv6 address in brackets and port" }).meta({
    description: "Address and port of the backend: a private IPv4 address (RFC 1918: Linode's private network 192.168.128.0/17, or a VPC's), e.g. 192.168.210.120:80; or a public IPv6 address (global unicast, 2000::/3; not link-local, unique local fc00::/7, loopback or IPv4-mapped) in brackets, e.g. [2600:3c03::f03c:91ff:fe24:3a2f]:80, which the API takes on common and premium NodeBalancers alike, outside a VPC (no subnetId, not with spec.vpcs). Unique within the config. An address of one of the cluster's nodes, on a port no NodePort Service of this namespace exposes, is a bare node port: only where the admin allows it (--node-port-namespaces; known where the operator reads Nodes), else NodePortsNotAllowed.",
    "x-kubernetes-validations": [
      {
        rule: `(self.matches('^[0-9.]+:[0-9]{1,5}$') ? isIP(${host}) && ip(${host}).family() == 4 : self.matches(r'^\\[[0-9a-fA-F:]+\\]:[0-9]{1,5}$') && isIP(${host6}) && ip(${host6}).family() == 6) && ${port} >= 1 && ${port} <= 65535`,
        message: "address must be an IPv4 address and a port 1..65535, e.g. 192.168.210.120:80, or an IPv6 address in brackets and a port, e.g. [2600:3c03::1]:80",
      },
      {
        // The spec says "Private IP address of the backend"; the real API takes Linode's private
        // network and VPC addresses alike, and so does the emulator: any RFC 1918 address.
        rule: `!isIP(${host}) || cidr('10.0.0.0/8').containsIP(${host}) || cidr('172.16.0.0/12').containsIP(${host}) || cidr('192.168.0.0/16').containsIP(${host})`,
        message: "address must be a private IPv4 address (10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16)",
      },
      {
        // CL26 and the spec: IPv6 backends are reached at their public address (addresses.ts).
        rule: `!self.startsWith('[') || !self.contains(']') || !isIP(${host6}) || cidr('2000::/3').containsIP(${host6})`,
        message: "an IPv6 backend must be a public (global unicast, 2000::/3) address: not link-local, unique local (fc00::/7), loopback or IPv4-mapped",
      },
    ],
  }),
  weight: z.int().min(1).max(255).optional().meta({ description: "1..255: a higher weight receives more new connections. Unset: the API's default, and not compared." }),
  subnetId: linodeIdSchema.optional().meta({ description: "A VPC backend: the NodeBalancer's backend subnet (spec.vpcs), the address one inside it. Unset on a NodeBalancer with spec.vpcs: that subnet. Create-only per node: a node whose subnet changes is replaced in the config's rebuild." }),
  mode: z.enum(nodeModes).optional().meta({
    description: "accept: receives traffic; reject: none; drain: only connections already pinned to it; backup: only while every accept node is down. Unset: the API's default (accept), and not compared. Not on a udp config's nodes (the API gives them no mode).",
  }),
}).meta({
  description: "A backend receiving the config's traffic.",
  // CCM sends no subnet with an IPv6 backend; the API's VPC backends are IPv4 (spec 4.234.0).
  "x-kubernetes-validations": [{ rule: "!self.address.startsWith('[') || !has(self.subnetId)", message: "an IPv6 backend is outside a VPC: it takes no subnetId", fieldPath: ".subnetId" }],
});

export const nodeBalancerConfigSchema = z.object({
  port: z.int().min(1).max(65535).meta({ description: "Listening port, 1..65535; unique among the tcp/http/https configs and among the udp ones (the list is keyed by port and protocol)." }),
  protocol: z.enum(nodeBalancerProtocols).default("http").meta({ description: "http, https (needs tlsSecretRef), tcp, or udp (premium types only: Linode's common NodeBalancers take no new UDP configs, so one is refused at admission, and an adopted common NodeBalancer keeps only the udp configs it has; its own algorithms, stickiness and udpCheckPort; no passive checks, PROXY protocol, TLS or node modes). A udp config may share its port with a tcp/http/https one." }),
  algorithm: z.enum(nodeBalancerAlgorithms).default("roundrobin").meta({ description: "How a backend is picked: roundrobin or leastconn; source (tcp/http/https only) or ring_hash (udp only)." }),
  stickiness: z.enum(nodeBalancerStickiness).default("none").meta({ description: "Session stickiness: none; table or http_cookie (tcp/http/https only); session or source_ip (udp only)." }),
  check: z.enum(nodeBalancerChecks).default("none").meta({
    description: "Active health check: none, connection, http (checkPath answers) or http_body (the answer contains checkBody).",
  }),
  checkInterval: z.int().min(2).max(3600).default(31).meta({ description: "Seconds between checks, 2..3600; must be greater than checkTimeout." }),
  checkTimeout: z.int().min(1).max(30).default(30).meta({ description: "Seconds to wait for a check, 1..30; must be less than checkInterval." }),
  checkAttempts: z.int().min(1).max(30).default(3).meta({ description: "Failed checks, 1..30, before a backend is marked down." }),
  checkPath: z.string().max(2048).regex(/^[a-zA-Z0-9/%?&=._-]*$/).optional().meta({ description: "URL path requested by http and http_body checks, e.g. /healthz." }),
  checkBody: z.string().max(4096).optional().meta({ description: "Text the http_body check expects in the response." }),
  // No default: the API's is true for tcp/http/https and false (the only value) for udp, and a
  // CRD default cannot depend on the protocol.
  checkPassive: z.boolean().optional().meta({ description: "Passive checks: a backend answering 5xx is taken out of rotation. Unset: on for tcp, http and https (the API's default), off for udp (the API has none there: true is refused)." }),
  udpCheckPort: z.int().min(1).max(65535).optional().meta({ description: "udp only: the backends' port the health check (check) connects to, 1..65535. Unset: the API's default, 80." }),
  proxyProtocol: z.enum(nodeBalancerProxyProtocols).default("none").meta({ description: "PROXY protocol header sent to backends: none, v1 or v2 (v1 and v2 need protocol tcp)." }),
  cipherSuite: z.enum(nodeBalancerCipherSuites).default("recommended").meta({ description: "TLS ciphers for https: recommended, or legacy (insecure; only if needed)." }),
  tlsSecretRef: localObjectRefSchema.optional().meta({
    description: "A kubernetes.io/tls Secret (tls.crt, tls.key) in this namespace: the certificate served on https ports. Required for https, not allowed otherwise. A changed Secret is noticed and the config updated.",
  }),
  nodes: z.array(nodeBalancerNodeSchema).max(64).default([]).meta({
    description: "Backends for this port, keyed by address: at least one, unless nodesFrom gives them (both may be set: merged, these win on the same address).",
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["address"],
  }),
  nodesFrom: z.object({
    serviceRef: z.object({
      name: z.string().min(1).max(63).regex(/^[a-z]([-a-z0-9]*[a-z0-9])?$/).meta({ description: "A Service in this namespace, of type NodePort or LoadBalancer." }),
      port: z.union([z.int().min(1).max(65535), z.string().min(1).max(15)]).meta({ description: "Its port, by number or name: backends listen on that port's nodePort.", "x-kubernetes-int-or-string": true, anyOf: undefined, type: undefined }),
    }).optional().meta({ description: "Backends are the nodes that serve the Service: every Ready node with externalTrafficPolicy Cluster, the nodes running its ready endpoints with Local; each at its private InternalIP and the port's nodePort." }),
    nodes: z.object({
      selector: labelSelectorSchema.prefault({}).meta({ description: "Which Nodes (empty: every Node)." }),
      port: z.int().min(1).max(65535).meta({ description: "The port the backends listen on." }),
    }).optional().meta({ description: "Backends are the Ready Nodes the selector picks, at their private InternalIP and this port: any port of the nodes themselves (the kubelet's, another namespace's NodePort), so only in namespaces the operator's admin allows (--node-port-namespaces, chart value nodePortNamespaces); elsewhere the NodeBalancer is refused, Synced=False NodePortsNotAllowed, and nothing is created or sent. serviceRef is allowed everywhere." }),
    weight: z.int().min(1).max(255).optional().meta({ description: "Weight of each backend found (1..255; unset: the API's default)." }),
    addressFamily: z.enum(["IPv4", "IPv6"]).optional().meta({
      description: "Which address of each node is its backend. IPv4 (unset): its private InternalIP (RFC 1918; in a VPC, the one inside the backend subnet). IPv6: its public IPv6 address (global unicast, 2000::/3), its ExternalIP or else its InternalIP, sent as [address]:port with no subnet, as the cloud controller manager's IPv6 backends are; the way a premium NodeBalancer outside a VPC reaches the nodes. Not with spec.vpcs (IPv6 backends are not VPC backends). A node without such an address is skipped, as below.",
    }),
  }).optional().meta({
    description: "Backends that follow the cluster instead of a hand-kept list: changes converge by one rebuild of the config, coalesced. A node cordoned, or whose endpoints are terminating, is set to drain mode first and removed once gone; a node without a private IPv4 InternalIP (RFC 1918), or with addressFamily IPv6 without a public IPv6 address, is skipped: status.skippedBackends and a Warning Event (BackendSkipped) say how many and why, the operator's log which. Needs the operator to read Nodes, Services and EndpointSlices (the chart's rbac.readNodes=true); otherwise NodesNotReadable. A Service missing or without the node port holds the config as it is (BackendSourceNotFound), as does a result with no backend at all (NoBackends).",
    "x-kubernetes-validations": [
      { rule: "has(self.serviceRef) != has(self.nodes)", message: "nodesFrom names exactly one source: serviceRef or nodes" },
    ],
  }),
}).meta({
  description: "One listening port and its backends.",
  "x-kubernetes-validations": [
    { rule: "size(self.nodes) > 0 || has(self.nodesFrom)", message: "a config needs at least one node, or nodesFrom", fieldPath: ".nodes" },
    { rule: "self.checkTimeout < self.checkInterval", message: "checkTimeout must be less than checkInterval", fieldPath: ".checkTimeout" },
    { rule: "self.protocol != 'https' || has(self.tlsSecretRef)", message: "tlsSecretRef is required when protocol is https", fieldPath: ".tlsSecretRef", reason: "FieldValueRequired" },
    { rule: "self.protocol == 'https' || !has(self.tlsSecretRef)", message: "tlsSecretRef is only allowed when protocol is https (http and tcp serve no certificate)", fieldPath: ".tlsSecretRef", reason: "FieldValueForbidden" },
    { rule: "self.proxyProtocol == 'none' || self.protocol == 'tcp'", message: "proxyProtocol v1 and v2 require protocol tcp (udp has no PROXY protocol)", fieldPath: ".proxyProtocol" },
    // The API's own rules per protocol (spec 4.234.0), refused here so nothing is sent.
    { rule: "self.protocol == 'udp' ? self.algorithm != 'source' : self.algorithm != 'ring_hash'", message: "algorithm source is for tcp, http and https; ring_hash for udp (udp takes roundrobin, leastconn or ring_hash)", fieldPath: ".algorithm" },
    { rule: "self.protocol == 'udp' ? self.stickiness in ['none', 'session', 'source_ip'] : self.stickiness in ['none', 'table', 'http_cookie']", message: "stickiness table and http_cookie are for tcp, http and https; session and source_ip for udp", fieldPath: ".stickiness" },
    { rule: "self.protocol == 'udp' || !has(self.udpCheckPort)", message: "udpCheckPort is only for protocol udp", fieldPath: ".udpCheckPort", reason: "FieldValueForbidden" },
    { rule: "self.protocol != 'udp' || !has(self.checkPassive) || !self.checkPassive", message: "checkPassive must be false (or unset) for protocol udp: the API has no passive checks there", fieldPath: ".checkPassive" },
    { rule: "self.protocol != 'udp' || self.nodes.all(n, !has(n.mode))", message: "the nodes of a udp config take no mode (the API gives them none)", fieldPath: ".nodes" },
  ],
});

/** Whether config `c` (CEL) has IPv6 backends only, or none: by its static nodes and its nodesFrom's address family. */
const fromIPv6 = "(has(c.nodesFrom) && has(c.nodesFrom.addressFamily) && c.nodesFrom.addressFamily == 'IPv6')";
const allIPv6 = `(!has(c.nodes) || c.nodes.all(n, n.address.startsWith('['))) && (!has(c.nodesFrom) || ${fromIPv6})`;
const noIPv6 = `(!has(c.nodes) || c.nodes.all(n, !n.address.startsWith('['))) && !${fromIPv6}`;

export const nodeBalancerSpecSchema = z.object({
  region: linodeSlugSchema.meta({
    description: "Linode region id, e.g. us-east; backends must be in the same region. Immutable.",
    "x-kubernetes-validations": [immutable("region", "a NodeBalancer cannot move between regions; create a new NodeBalancer")],
  }),
  label: z.string().min(3).max(32).regex(/^[a-zA-Z0-9_-]+$/).optional().meta({
    description: "Label of the cloud NodeBalancer: 3..32 letters, digits, '-' or '_', unique on the account. Default: derived from namespace and name.",
  }),
  clientConnThrottle: z.int().min(0).max(20).default(0).meta(initializedOnAdoption("New connections per second per client IP, 0..20; 0 disables throttling.", 0)),
  clientUdpSessThrottle: z.int().min(0).max(20).default(0).meta(initializedOnAdoption("New udp sessions per second per client IP, 0..20; 0 disables throttling. A create sends it only when not 0 (Linode says the setting may not be available to every account); afterwards it is compared, and changed, only where the API reports it.", 0)),
  tags: z.array(z.string().min(1).max(50)).default([]).meta({
    ...initializedOnAdoption("Tags on the cloud NodeBalancer (organizational only).", []),
    "x-kubernetes-list-type": "set",
  }),
  type: z.enum(nodeBalancerTypes).default("common").meta(initializedOnAdoption("common, premium or premium_40gb (the API's types; premium: more connections and nodes, VPC or IPv6 backends only, a frontend in a VPC). Create-only: a change is Synced=False, reason ImmutableFieldMismatch, nothing sent (create a new NodeBalancer).", "common")),
  vpcs: z.array(backendVpcSchema).max(1).optional().meta({
    description: "The VPC subnet of the backends (one; the API's `vpcs`/`backend_vpcs`): by subnetId, or by vpcLabel and subnetLabel as the cloud controller manager names one; it must be in spec.region. Every node then is a VPC node in that subnet (nodes[].subnetId defaults to it; nodesFrom takes each node's InternalIP inside the subnet's range). Create-only: a change is Synced=False, reason ImmutableFieldMismatch, nothing sent. Naming a VPC with the operator's own token follows the rule for every account object: only in namespaces the admin allows (--adopt-namespaces; else AdoptionNotAllowed, nothing sent), always with credentialsRef. A subnet that is not there, or not in the region, is VPCNotFound, nothing sent. Adopted with it unset: the NodeBalancer's backend VPC, written to the spec once.",
  }),
  frontendVpc: frontendVpcSchema.optional().meta({
    description: "The VPC subnet the frontend address is in (premium types only, refused at admission otherwise): the NodeBalancer gets a VPC address and no public host name. Create-only, named and checked as spec.vpcs is. Adopted with it unset: the NodeBalancer's frontend VPC, written to the spec once.",
  }),
  ipv4: z.string().max(15).optional().meta({
    description: "A reserved IPv4 address of the account (unassigned) for the NodeBalancer, sent on every create, also the one requests.recreate makes, so the address is kept. Not with frontendVpc. Create-only: a NodeBalancer with another address is Synced=False, reason ImmutableFieldMismatch, nothing sent. Taking an address with the operator's own token follows the rule for every account object (--adopt-namespaces; else AdoptionNotAllowed). Not filled on adoption: the NodeBalancer's address may be an ephemeral one, which a recreate could not ask for again (status.ipv4 shows it).",
    "x-kubernetes-validations": [{ rule: "isIP(self) && ip(self).family() == 4", message: "ipv4 must be an IPv4 address" }],
  }),
  // Changeable, beyond the spec (which assigns a firewall only at creation): see FirewallPlan in diff.ts for why and how.
  firewallId: linodeIdSchema.optional().meta({
    description: "Id of an existing Cloud Firewall to assign: at creation, and afterwards in place (beyond the API spec's NodeBalancer document, which assigns one only at creation; the real platform assigns and removes one at any time, keeping the NodeBalancer and its addresses). Naming one by id follows the rule for every account object: always allowed with spec.credentialsRef (the namespace's own token); with the operator's shared token only in namespaces the admin allows (--adopt-namespaces, chart value adoptNamespaces); never a firewall a NodeBalancer of another namespace names or holds. One this resource may not assign (none with that id, another namespace's, or not allowed here) is Synced=False, reason FirewallNotFound, with one message for all, and nothing is sent (no NodeBalancer is created without it). A change replaces the firewall this resource assigned with the new one in one call (never a moment without one); removing the field removes the one this resource assigned. A firewall this resource did not assign (someone else did, or it was already assigned when first named here) is never removed: it stays when the field stops naming it, and a change away from it is refused while it is enabled (Synced=False, reason FirewallConflict); status.firewalls says which is which. One removed outside is assigned again within a few polls.",
  }),
  configs: z.array(nodeBalancerConfigSchema).max(32).default([]).meta({
    ...initializedOnAdoption("Per-port configs, keyed by port and protocol: a port is unique among the tcp, http and https configs, and among the udp ones (a udp config may share a port with a tcp/http/https one, as the API allows). A NodeBalancer serves traffic once a config has a node: with none it is Ready=False, reason NoConfigs. Adopted with configs unset, every config it has is written here with its nodes; one the spec cannot hold (an https config: its certificate only Linode holds, so no tlsSecretRef can be named; a protocol or setting the schema lacks; a config without nodes) is CannotExpress, nothing sent, until spec.configs says them.", []),
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["port", "protocol"],
    "x-kubernetes-validations": [
      {
        rule: "self.all(a, self.filter(b, b.port == a.port && (b.protocol == 'udp') == (a.protocol == 'udp')).size() == 1)",
        message: "a port is used once among the tcp, http and https configs, and once among the udp configs",
      },
    ],
  }),
  deletionProtection: z.boolean().default(false).meta({
    description: "true: the operator puts a cannot_delete resource lock on the NodeBalancer (one of its own, status.deletionLockId), so nobody deletes it (Cloud Manager, linode-cli, Terraform, this operator) until the lock is removed; false: it removes that lock, and only that one (a lock someone else made stays). Needs the token scope account:read_write and an unrestricted user. Deleting this resource while the NodeBalancer has any lock waits (Synced=False, reason Locked, naming the lock) and completes once the lock is gone; set this to false first to let the operator remove its own.",
  }),
  credentialsRef: credentialsRefSchema.optional(),
  deletionPolicy: deletionPolicySchema,
  managementPolicy: managementPolicySchema.meta({
    description: "Manage: create and update the cloud NodeBalancer to match the spec. Observe: adopt read-only (nodeBalancerId), mirror status, never change it.",
  }),
  nodeBalancerId: linodeIdSchema.optional().meta({
    description: "Adopt an existing NodeBalancer by its Linode id instead of creating one. Cannot change once set. With managementPolicy Manage, the fields the spec leaves unset (clientConnThrottle, tags, configs) first take the NodeBalancer's values, written to the spec once (annotation linode.operator.dev/initialized-from, an Event LateInitialized), so nothing the spec did not say is sent; what the spec cannot hold is CannotExpress, nothing sent. With the operator's own token only in namespaces the operator allows (--adopt-namespaces; otherwise AdoptionNotAllowed), always with credentialsRef; an id another resource manages is refused (ExternalIdInUse).",
  }),
  requests: z.object({
    recreate: requestTokenSchema.optional().meta({ description: "Only when the NodeBalancer this resource manages has vanished (Ready=False, reason ExternalResourceGone): a new value creates a new one (new addresses), once. A value set while it exists does nothing." }),
  }).optional().meta({ description: "Imperative actions. Each is performed once per new token value and recorded in status.lastRequests." }),
}).meta({
  description: "Desired state of a Linode NodeBalancer.",
  "x-kubernetes-validations": [
    immutableOnceSet("nodeBalancerId", "it names the cloud NodeBalancer this resource manages; create another NodeBalancer to adopt a different one"),
    { rule: "!has(self.frontendVpc) || (has(self.type) && self.type != 'common')", message: "frontendVpc needs a premium type (premium or premium_40gb): the API refuses a frontend VPC on common", fieldPath: ".frontendVpc" },
    // CL26 (2026-09-30): basic NodeBalancers take no new UDP configs, "exceptions … for pre-existing configurations": an adopted one may keep (and say) those it has.
    { rule: "has(self.nodeBalancerId) || (has(self.type) && self.type != 'common') || !has(self.configs) || self.configs.all(c, c.protocol != 'udp')", message: "udp configs need a premium type (premium or premium_40gb): Linode's common NodeBalancers take no new UDP configs (an adopted one, spec.nodeBalancerId, keeps those it has)", fieldPath: ".type" },
    { rule: "!has(self.frontendVpc) || !has(self.ipv4)", message: "ipv4 (a reserved public address) and frontendVpc (a VPC address) exclude each other", fieldPath: ".ipv4" },
    // CL26: premium takes VPC or public IPv6 backends, no legacy private IPv4: outside a VPC every backend is IPv6.
    { rule: `!has(self.type) || self.type == 'common' || has(self.vpcs) || !has(self.configs) || self.configs.all(c, ${allIPv6})`, message: "a premium NodeBalancer takes no private IPv4 backends outside a VPC: set spec.vpcs (the backends' subnet), or give IPv6 backends only ([ipv6]:port nodes, nodesFrom.addressFamily IPv6)", fieldPath: ".vpcs" },
    // CCM never sends a backend VPC with IPv6 backends; CL25: "either VPC or non-VPC backends".
    { rule: `!has(self.vpcs) || !has(self.configs) || self.configs.all(c, ${noIPv6})`, message: "IPv6 backends are not VPC backends: a NodeBalancer with spec.vpcs takes none ([ipv6]:port nodes, nodesFrom.addressFamily IPv6)", fieldPath: ".configs" },
    { rule: "!has(self.configs) || self.configs.all(c, !has(c.nodes) || c.nodes.all(n, !has(n.subnetId) || (has(self.vpcs) && (!has(self.vpcs[0].subnetId) || n.subnetId == self.vpcs[0].subnetId))))", message: "a node's subnetId must be the subnet of spec.vpcs (a NodeBalancer's VPC backends are all in its backend subnet)", fieldPath: ".configs" },
  ],
});

export type NodeBalancerSpec = z.infer<typeof nodeBalancerSpecSchema>;
export type NodeBalancerConfigSpec = z.infer<typeof nodeBalancerConfigSchema>;
export type NodeBalancerNodeSpec = z.infer<typeof nodeBalancerNodeSchema>;

// Settings are open strings here, not the spec's enums: status mirrors what the API reports,
// including values it may add (udp, session) that the spec does not offer.
export const nodeBalancerConfigStatusSchema = z.object({
  port: z.int().meta({ description: "Listening port." }),
  id: z.int().optional().meta({ description: "Linode id of the config." }),
  protocol: z.string().meta({ description: "Protocol as the API reports it: http, https, tcp or udp." }),
  algorithm: z.string().optional().meta({ description: "Balancing algorithm as the API reports it." }),
  stickiness: z.string().optional().meta({ description: "Session stickiness as the API reports it." }),
  check: z.string().optional().meta({ description: "Active health check as the API reports it." }),
  checkInterval: z.int().optional().meta({ description: "Seconds between health checks." }),
  checkTimeout: z.int().optional().meta({ description: "Seconds to wait for a health check." }),
  checkAttempts: z.int().optional().meta({ description: "Failed checks before a backend is marked down." }),
  checkPath: z.string().optional().meta({ description: "URL path of http and http_body checks (absent when the API reports none)." }),
  checkBody: z.string().optional().meta({ description: "Text the http_body check expects (absent when the API reports none)." }),
  checkPassive: z.boolean().optional().meta({ description: "Whether failed requests mark a backend down (passive checks)." }),
  cipherSuite: z.string().optional().meta({ description: "TLS cipher suite as the API reports it (it reports one for every config; it applies to https only)." }),
  proxyProtocol: z.string().optional().meta({ description: "Proxy Protocol version sent to the backends: none, v1 or v2." }),
  udpCheckPort: z.int().optional().meta({ description: "udp: the backends' port the health check connects to." }),
  udpSessionTimeout: z.int().optional().meta({ description: "udp: seconds an idle session is kept (the API's, read-only)." }),
  nodesStatus: z.object({
    up: z.int().meta({ description: "Backends up." }),
    down: z.int().meta({ description: "Backends down." }),
  }).optional().meta({ description: "Backend health counts, updated periodically by the API." }),
  sslCommonName: z.string().optional().meta({ description: "Common name of the certificate the API holds (https)." }),
  sslFingerprint: z.string().optional().meta({ description: "SHA1 fingerprint of the certificate the API holds (https)." }),
  nodes: z.array(z.object({
    label: z.string().optional().meta({ description: "Label of the backend." }),
    address: z.string().meta({ description: "Address and port of the backend." }),
    id: z.int().optional().meta({ description: "Linode id of the node." }),
    status: z.string().optional().meta({ description: "Health: UP, DOWN or unknown." }),
    mode: z.string().optional().meta({ description: "Mode as the API reports it: accept, reject, drain or backup." }),
    weight: z.int().optional().meta({ description: "Weight as the API reports it (the API's default where the spec sets none)." }),
    subnetId: z.int().optional().meta({ description: "A VPC backend's subnet." }),
    vpcConfigId: z.int().optional().meta({ description: "A VPC backend: the id of the NodeBalancer's VPC config (status.vpcs) serving it." }),
  })).optional().meta({ description: "Backends as the API reports them." }),
}).meta({ description: "Observed state of one config, as the API reports it." });

export const nodeBalancerStatusSchema = z.object({
  id: z.int().optional().meta({ description: "Linode id of the NodeBalancer." }),
  label: z.string().optional().meta({ description: "Label of the cloud NodeBalancer." }),
  type: z.string().optional().meta({ description: "The NodeBalancer's type as the API reports it: common, premium, premium_40gb." }),
  hostname: z.string().optional().meta({ description: "Public host name (none for a frontend in a VPC)." }),
  frontendAddressType: z.string().optional().meta({ description: "public, or vpc: ipv4 is then the frontend's VPC address." }),
  vpcs: z.array(z.object({
    id: z.int().meta({ description: "Linode id of the VPC config." }),
    purpose: z.string().meta({ description: "backend or frontend." }),
    subnetId: z.int().meta({ description: "The subnet." }),
    vpcId: z.int().optional().meta({ description: "The subnet's VPC." }),
    ipv4Range: z.string().optional().meta({ description: "The NodeBalancer's addresses in the subnet." }),
    ipv6Range: z.string().optional().meta({ description: "Its IPv6 range, if any." }),
  })).optional().meta({ description: "The NodeBalancer's VPC configs, as the API lists them (empty: none; read once, since they cannot change, and trusted from status after a restart)." }),
  ipv4: z.string().optional().meta({ description: "Public IPv4 address." }),
  ipv6: z.string().optional().meta({ description: "Public IPv6 address." }),
  updated: z.string().optional().meta({ description: "The NodeBalancer's `updated` time, as the API reported it when the configs, nodes and firewalls below were read. The operator reads a config's nodes again only when this moves or the config's health counts change (it assumes the API moves `updated` on every config or node change; --nodebalancer-reread-seconds adds a periodic full read); after a restart, what status shows is trusted while the API still reports this time." }),
  ports: z.string().optional().meta({ description: "The configs' ports, comma-separated (for kubectl get)." }),
  configs: z.array(nodeBalancerConfigStatusSchema).optional().meta({
    description: "Per-port configs as the API reports them.",
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["port", "protocol"],
  }),
  locks: z.array(z.string()).optional().meta({ description: "The NodeBalancer's resource locks, by type (cannot_delete, cannot_delete_with_subresources), as the API reports them: while there is one, nobody can delete it." }),
  deletionLockId: z.int().optional().meta({ description: "The id of the cannot_delete lock this resource made for spec.deletionProtection: the only lock it ever removes." }),
  firewalls: z.array(z.object({
    id: z.int().meta({ description: "Linode id of the firewall." }),
    label: z.string().optional().meta({ description: "Label of the firewall." }),
    status: z.string().optional().meta({ description: "Status of the firewall, e.g. enabled." }),
    assignedBy: z.enum(["ThisResource", "Other"]).optional().meta({
      description: "ThisResource: this resource assigned it (in the create, or by its own assignment or swap); it is removed when spec.firewallId stops naming it. Other: someone else assigned it, or it was already assigned when spec.firewallId first named it; the operator never removes it: it stays assigned when spec.firewallId stops naming it, and a change of spec.firewallId away from it is refused while it is enabled (Synced=False, reason FirewallConflict).",
    }),
  })).optional().meta({ description: "Cloud Firewalls assigned to the NodeBalancer, as the API lists them (read again when the NodeBalancer's `updated` moves, after each change the operator makes, and every drift window while spec.firewallId names one)." }),
  managedFirewallIds: z.array(z.int()).optional().meta({
    description: "The assigned firewalls this resource assigned itself (in the create, or by its own assignment or swap). Only these are ever removed from the NodeBalancer; a firewall that was already assigned when spec.firewallId named it is not among them.",
  }),
  lastRequests: z.object({
    recreate: recreateRecordSchema.optional(),
  }).optional().meta({ description: "The request tokens already seen: a token equal to the spec's is never performed again." }),
  account: accountRecordSchema.optional(),
  externalIdProof: externalIdProofSchema,
  skippedBackends: z.array(z.string()).optional().meta({ description: "How many nodes configs[].nodesFrom found cannot be backends, and why (a Warning Event, BackendSkipped, says each once). Which nodes, at which addresses, only the operator's log says: status names a node only as a backend in use." }),
}).meta({ description: "Observed state of the NodeBalancer." });

export type NodeBalancerStatus = z.infer<typeof nodeBalancerStatusSchema>;
export type NodeBalancerConfigStatus = z.infer<typeof nodeBalancerConfigStatusSchema>;
