// Handlers of /nodebalancers/*: NodeBalancer CRUD, configs CRUD and rebuild, nodes CRUD,
// firewalls and statistics.
import { entityPermission, grantCreated, requireEntity, requireGlobalGrant, requireUnrestricted } from "../auth.ts";
import type { RequestContext, Route, RouteResult } from "../context.ts";
import { ApiError, badRequest, notFound } from "../errors.ts";
import { applyFilter, type Filterable } from "../filter.ts";
import { pageRequest, paginate } from "../pagination.ts";
import { intParam } from "../router.ts";
import { nextId, type ConfigRecord, type NodeBalancerRecord, type NodeRecord } from "../store.ts";
import { parseBody } from "../validation.ts";
import {
  applyConfig, checkAddress, checkRegion, defaultConfig, findNodeBalancer, makeNode, nbLabelTaken, newNodeBalancer, recheck, settleChecks,
} from "./model.ts";
import { attachFirewall, findFirewall, firewallsOf, forgetDevicesOf, renderFirewall, replaceFirewalls } from "./firewalls.ts";
import { lockedRefusal } from "../locks.ts";
import { nodeModeFor } from "./protocols.ts";
import { renderConfig, renderNode, renderNodeBalancer, renderStats } from "./render.ts";
import { applyVpcsAndAddress, checkInSubnet, checkNodeLimit, placeNode, renderVpcConfig } from "./vpcs.ts";
import {
  configSchema, nodeBalancerCreateSchema, nodeBalancerFirewallsSchema, nodeBalancerUpdateSchema, nodeCreateSchema, nodeUpdateSchema, rebuildSchema,
} from "./schemas.ts";

const NB_FILTERS: Filterable = {
  label: (nb: NodeBalancerRecord) => nb.label,
  region: (nb: NodeBalancerRecord) => nb.region,
  tags: (nb: NodeBalancerRecord) => nb.tags,
  ipv4: (nb: NodeBalancerRecord) => nb.ipv4,
};
const CONFIG_FILTERS: Filterable = { port: (c: ConfigRecord) => c.port, protocol: (c: ConfigRecord) => c.protocol };
const NODE_FILTERS: Filterable = {
  label: (n: NodeRecord) => n.label, address: (n: NodeRecord) => n.address, mode: (n: NodeRecord) => n.mode,
};

const OK: RouteResult = { body: {} };

/**
 * GET /nodebalancers/types as recorded (F:TestNodeBalancerType_List, 2025-08-25). No
 * premium_40gb plan was recorded, and how these ids map to a NodeBalancer's `type` is not known:
 * none is invented.
 */
const NODEBALANCER_PLANS = [
  { id: "nodebalancer", label: "NodeBalancer", price: { hourly: 0.015, monthly: 10 }, region_prices: [], transfer: 0 },
  { id: "nodebalancer-pr100", label: "Nodebalancer Premium", price: { hourly: 0.225, monthly: 150 }, region_prices: [], transfer: 0 },
];

function list<T>(req: RequestContext, items: readonly T[], filters: Filterable, render: (item: T) => unknown): RouteResult {
  const page = pageRequest(req.query);
  return { body: paginate(applyFilter(items, req.header("x-filter"), filters), page, render) };
}

function statsReady(req: RequestContext, nb: NodeBalancerRecord): boolean {
  return req.ctx.clock.now() - nb.created >= req.ctx.statsDelayMs;
}

function load(req: RequestContext, level: "read_only" | "read_write"): NodeBalancerRecord {
  const nb = findNodeBalancer(req.ctx, intParam(req.params, "nodeBalancerId"));
  requireEntity(req.principal, "nodebalancer", nb.id, level);
  settleChecks(req.ctx, nb);
  return nb;
}

function loadConfig(req: RequestContext, level: "read_only" | "read_write"): { nb: NodeBalancerRecord; config: ConfigRecord } {
  const nb = load(req, level);
  const config = nb.configs[String(intParam(req.params, "configId"))];
  if (config === undefined) throw notFound();
  return { nb, config };
}

function loadNode(req: RequestContext, level: "read_only" | "read_write") {
  const { nb, config } = loadConfig(req, level);
  const node = config.nodes[String(intParam(req.params, "nodeId"))];
  if (node === undefined) throw notFound();
  return { nb, config, node };
}

function touch(req: RequestContext, nb: NodeBalancerRecord): void {
  nb.updated = req.ctx.clock.now();
}

/** A lock forbids it (locks.ts): the NodeBalancer itself, or (`subresource`) one of its configs or nodes. */
function refuseIfLocked(nb: NodeBalancerRecord, subresource: boolean): void {
  const refusal = lockedRefusal(nb, subresource);
  if (refusal !== undefined) throw refusal;
}

/** Where a node sent to `nb` stands (its VPC subnet, if any), checked before it is made. */
function placed(req: RequestContext, nb: NodeBalancerRecord, input: { address: string; subnet_id?: number | null | undefined }, prefix = ""): { subnet_id?: number; vpc_config_id?: number } {
  const place = placeNode(nb, input.address, input.subnet_id, prefix);
  checkInSubnet(req, input.address, place.subnet_id, `${prefix}address`);
  return place;
}

function findFirewallOr400(req: RequestContext, id: number) {
  try {
    return findFirewall(req.ctx, id);
  } catch {
    throw badRequest("Firewall not found", "firewall_id");
  }
}

export function nodeBalancerRoutes(): Route[] {
  const one = "/nodebalancers/{nodeBalancerId}";
  const config = `${one}/configs/{configId}`;
  const node = `${config}/nodes/{nodeId}`;
  return [
    {
      // Before the {nodeBalancerId} routes, which would take "types" for an id. No auth needed (spec).
      method: "GET", template: "/nodebalancers/types", area: null, level: "read_only", paginated: true,
      handler: (req) => list(req, NODEBALANCER_PLANS, {}, (t) => t),
    },
    {
      method: "GET", template: "/nodebalancers", area: "nodebalancers", level: "read_only", paginated: true,
      handler: (req) => {
        const visible = [...req.ctx.state.nodebalancers.values()].filter((nb) => entityPermission(req.principal, "nodebalancer", nb.id) !== null);
        return list(req, visible, NB_FILTERS, (nb) => renderNodeBalancer(nb, req.ctx.clock.now(), nb.created + req.ctx.statsDelayMs));
      },
    },
    {
      method: "POST", template: "/nodebalancers", area: "nodebalancers", level: "read_write",
      handler: (req) => {
        requireGlobalGrant(req.principal, "add_nodebalancers");
        const input = parseBody(nodeBalancerCreateSchema, req.body);
        checkRegion(input.region);
        if (input.label != null && nbLabelTaken(req.ctx, input.label)) throw badRequest("Label must be unique", "label");
        // Checked before anything is made. A deleted firewall's reason and field are guessed.
        const firewall = input.firewall_id == null ? undefined : findFirewallOr400(req, input.firewall_id);
        const nb = newNodeBalancer(req.ctx, input.region, req.principal.user.username);
        if (input.label != null) nb.label = input.label;
        nb.client_conn_throttle = input.client_conn_throttle ?? 0;
        nb.client_udp_sess_throttle = input.client_udp_sess_throttle ?? 0;
        nb.tags = input.tags ?? [];
        nb.type = input.type ?? "common";
        applyVpcsAndAddress(req, nb, input);
        (input.configs ?? []).forEach((c, i) => {
          const prefix = `configs[${i}].`;
          if (c.nodes == null || c.nodes.length === 0) throw badRequest("At least one node is required", `${prefix}nodes`);
          checkNodeLimit(nb, c.nodes.length, `${prefix}nodes`);
          const record = defaultConfig(nextId(req.ctx.state, "config"), nb.id);
          applyConfig(nb, record, c, prefix, req.ctx.faults.config.udpOnCommon);
          c.nodes.forEach((n, j) => {
            const place = placed(req, nb, n, `${prefix}nodes[${j}].`);
            const made = { ...makeNode(req.ctx, record, n, `${prefix}nodes[${j}].`), ...place };
            record.nodes[String(made.id)] = made;
          });
          nb.configs[String(record.id)] = record;
        });
        req.ctx.state.nodebalancers.set(nb.id, nb);
        if (firewall !== undefined) attachFirewall(req.ctx, firewall, nb);
        grantCreated(req.principal, "nodebalancer", nb.id);
        return { body: renderNodeBalancer(nb, req.ctx.clock.now(), Infinity) };
      },
    },
    {
      method: "GET", template: one, area: "nodebalancers", level: "read_only",
      handler: (req) => { const nb = load(req, "read_only"); return { body: renderNodeBalancer(nb, req.ctx.clock.now(), nb.created + req.ctx.statsDelayMs) }; },
    },
    {
      method: "PUT", template: one, area: "nodebalancers", level: "read_write",
      handler: (req) => {
        const nb = load(req, "read_write");
        const input = parseBody(nodeBalancerUpdateSchema, req.body);
        if (input.label != null && nbLabelTaken(req.ctx, input.label, nb.id)) throw badRequest("Label must be unique", "label");
        if (input.label != null) nb.label = input.label;
        if (input.client_conn_throttle != null) nb.client_conn_throttle = input.client_conn_throttle;
        if (input.client_udp_sess_throttle != null) nb.client_udp_sess_throttle = input.client_udp_sess_throttle;
        if (input.tags != null) nb.tags = input.tags;
        touch(req, nb);
        return { body: renderNodeBalancer(nb, req.ctx.clock.now(), nb.created + req.ctx.statsDelayMs) };
      },
    },
    {
      method: "DELETE", template: one, area: "nodebalancers", level: "read_write",
      handler: (req) => {
        const nb = load(req, "read_write");
        refuseIfLocked(nb, false);
        req.ctx.state.nodebalancers.delete(nb.id);
        forgetDevicesOf(req.ctx, nb.id);
        return OK;
      },
    },
    {
      method: "GET", template: `${one}/firewalls`, area: "nodebalancers", level: "read_only", paginated: true,
      handler: (req) => {
        const nb = load(req, "read_only");
        return list(req, firewallsOf(req.ctx, nb.id), {}, (f) => renderFirewall(req.ctx, f));
      },
    },
    {
      // Replaces the NodeBalancer's firewalls (firewalls.ts, replaceFirewalls). Restricted users
      // are refused, as on the firewall routes: firewall grants are not modelled here (guessed:
      // the real API would ask for read_write on each firewall named).
      method: "PUT", template: `${one}/firewalls`, area: "nodebalancers", level: "read_write",
      handler: (req) => {
        const nb = load(req, "read_write");
        requireUnrestricted(req.principal);
        const input = parseBody(nodeBalancerFirewallsSchema, req.body);
        return list(req, replaceFirewalls(req.ctx, nb, input.firewall_ids), {}, (f) => renderFirewall(req.ctx, f));
      },
    },
    {
      method: "GET", template: `${one}/vpcs`, area: "nodebalancers", level: "read_only", paginated: true,
      handler: (req) => {
        const nb = load(req, "read_only");
        return list(req, nb.vpcs ?? [], {}, (c) => renderVpcConfig(nb, c));
      },
    },
    {
      method: "GET", template: `${one}/vpcs/{vpcConfigId}`, area: "nodebalancers", level: "read_only",
      handler: (req) => {
        const nb = load(req, "read_only");
        const c = (nb.vpcs ?? []).find((v) => v.id === intParam(req.params, "vpcConfigId"));
        if (c === undefined) throw notFound();
        return { body: renderVpcConfig(nb, c) };
      },
    },
    {
      method: "GET", template: `${one}/stats`, area: "nodebalancers", level: "read_only",
      handler: (req) => {
        const nb = load(req, "read_only");
        if (!statsReady(req, nb)) throw new ApiError(400, [{ reason: "Stats are unavailable at this time." }]);
        return { body: renderStats(nb, req.ctx.clock.now(), nb.created + req.ctx.statsDelayMs) };
      },
    },
    {
      method: "GET", template: `${one}/configs`, area: "nodebalancers", level: "read_only", paginated: true,
      handler: (req) => list(req, Object.values(load(req, "read_only").configs), CONFIG_FILTERS, renderConfig),
    },
    {
      method: "POST", template: `${one}/configs`, area: "nodebalancers", level: "read_write",
      handler: (req) => {
        const nb = load(req, "read_write");
        const input = parseBody(configSchema, req.body);
        const record = defaultConfig(0, nb.id);
        applyConfig(nb, record, input, "", req.ctx.faults.config.udpOnCommon);
        record.id = nextId(req.ctx.state, "config");
        nb.configs[String(record.id)] = record;
        touch(req, nb);
        return { body: renderConfig(record) };
      },
    },
    {
      method: "GET", template: config, area: "nodebalancers", level: "read_only",
      handler: (req) => ({ body: renderConfig(loadConfig(req, "read_only").config) }),
    },
    {
      method: "PUT", template: config, area: "nodebalancers", level: "read_write",
      handler: (req) => {
        const { nb, config: c } = loadConfig(req, "read_write");
        applyConfig(nb, c, parseBody(configSchema, req.body), "", req.ctx.faults.config.udpOnCommon);
        touch(req, nb);
        return { body: renderConfig(c) };
      },
    },
    {
      method: "DELETE", template: config, area: "nodebalancers", level: "read_write",
      handler: (req) => {
        const { nb, config: c } = loadConfig(req, "read_write");
        refuseIfLocked(nb, true);
        Reflect.deleteProperty(nb.configs, String(c.id));
        touch(req, nb);
        return OK;
      },
    },
    {
      method: "POST", template: `${config}/rebuild`, area: "nodebalancers", level: "read_write",
      handler: (req) => {
        const { nb, config: c } = loadConfig(req, "read_write");
        const input = parseBody(rebuildSchema, req.body);
        const { nodes, ...fields } = input;
        // Validate everything before touching the config: the rebuild is all or nothing.
        const staged = { ...c, nodes: { ...c.nodes } };
        applyConfig(nb, staged, fields, "", req.ctx.faults.config.udpOnCommon);
        checkNodeLimit(nb, nodes.length, "nodes");
        const rebuilt: Record<string, NodeRecord> = {};
        nodes.forEach((n, i) => {
          const prefix = `nodes[${i}].`;
          if (n.id != null) {
            const existing = c.nodes[String(n.id)];
            if (existing === undefined) throw badRequest("Node not found in this config", `${prefix}id`);
            checkAddress(req.ctx, n.address, `${prefix}address`);
            const place = placed(req, nb, n, prefix);
            const kept = { ...existing, address: n.address, label: n.label, weight: n.weight ?? existing.weight, mode: nodeModeFor(staged.protocol, n.mode, existing.mode), ...place };
            if (n.address !== existing.address) recheck(req.ctx, kept);
            rebuilt[String(n.id)] = kept;
          } else {
            const place = placed(req, nb, n, prefix);
            const made = { ...makeNode(req.ctx, c, n, prefix), ...place };
            rebuilt[String(made.id)] = made;
          }
        });
        Object.assign(c, staged);
        c.nodes = rebuilt;
        touch(req, nb);
        return { body: renderConfig(c) };
      },
    },
    {
      method: "GET", template: `${config}/nodes`, area: "nodebalancers", level: "read_only", paginated: true,
      handler: (req) => list(req, Object.values(loadConfig(req, "read_only").config.nodes), NODE_FILTERS, renderNode),
    },
    {
      method: "POST", template: `${config}/nodes`, area: "nodebalancers", level: "read_write",
      handler: (req) => {
        const { nb, config: c } = loadConfig(req, "read_write");
        const input = parseBody(nodeCreateSchema, req.body);
        checkNodeLimit(nb, Object.keys(c.nodes).length + 1, "address");
        const place = placed(req, nb, input);
        const made = { ...makeNode(req.ctx, c, input), ...place };
        c.nodes[String(made.id)] = made;
        touch(req, nb);
        return { body: renderNode(made) };
      },
    },
    {
      // The spec lists node view under nodebalancers:read_write.
      method: "GET", template: node, area: "nodebalancers", level: "read_write",
      handler: (req) => ({ body: renderNode(loadNode(req, "read_only").node) }),
    },
    {
      method: "PUT", template: node, area: "nodebalancers", level: "read_write",
      handler: (req) => {
        const { nb, config: c, node: n } = loadNode(req, "read_write");
        const input = parseBody(nodeUpdateSchema, req.body);
        if (input.address != null) checkAddress(req.ctx, input.address, "address");
        // A node keeps its subnet unless the update names one (TF: a node cannot move to another subnet).
        Object.assign(n, placed(req, nb, { address: input.address ?? n.address, subnet_id: input.subnet_id ?? n.subnet_id }));
        if (input.address != null && input.address !== n.address) {
          n.address = input.address;
          recheck(req.ctx, n);
        }
        if (input.label != null) n.label = input.label;
        if (input.weight != null) n.weight = input.weight;
        n.mode = nodeModeFor(c.protocol, input.mode, n.mode);
        touch(req, nb);
        return { body: renderNode(n) };
      },
    },
    {
      method: "DELETE", template: node, area: "nodebalancers", level: "read_write",
      handler: (req) => {
        const { nb, config: c, node: n } = loadNode(req, "read_write");
        refuseIfLocked(nb, true);
        Reflect.deleteProperty(c.nodes, String(n.id));
        touch(req, nb);
        return OK;
      },
    },
  ];
}
