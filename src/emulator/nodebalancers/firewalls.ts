// Cloud Firewalls as they concern NodeBalancers: a firewall by id, its devices (assignments),
// and its deletion. The spec's NodeBalancer document has none of this (only `firewall_id` at
// creation and the list of a NodeBalancer's firewalls); the routes and shapes follow the
// official OpenAPI document (reference/openapi-subset.json: get-firewall, delete-firewall,
// get-firewall-devices, post-firewall-device, get-firewall-device, delete-firewall-device).
// What neither says, guessed and marked below:
//  - firewalls are made elsewhere: an id never seen is assumed to exist (made on first
//    reference, as NodeBalancer creation always did here); a deleted one is 404 for good.
//  - only unrestricted users may use these routes (restricted users have no firewall grants here).
//  - the emulator has no Linodes: a `linode` device is refused like a missing entity (404).
//  - a NodeBalancer takes one firewall (all are enabled here); a second is refused with the
//    reason recorded for POST /networking/firewalls ("Too many active firewalls attached to
//    NodeBalancer …", field devices.nodebalancers: linodego's TestNodeBalancerFirewalls_List),
//    without its field.
//  - the same firewall assigned twice to one NodeBalancer is refused (400, reason guessed).
//  - a device change does not move the NodeBalancer's `updated` (the device is the firewall's).
// PUT /nodebalancers/{id}/firewalls (replaceFirewalls) is newer than both documents: Akamai's
// changelog "April 28, 2025 — Linode Instances and NodeBalancers, added update firewalls" and
// techdocs put-node-balancer-firewalls (body `firewall_ids`, the complete list, replacing any
// existing assignments; `[]` removes all; answer: a paginated list of the firewalls now
// assigned; scope nodebalancers:read_write). linodego has the Linode instance twin
// (UpdateInstanceFirewalls: PUT, a paginated Firewall list back). What the docs do not say,
// guessed and marked at replaceFirewalls.
import { requireEntity, requireUnrestricted } from "../auth.ts";
import { apiTime } from "../clock.ts";
import type { EmulatorContext, RequestContext, Route } from "../context.ts";
import { ApiError, badRequest, notFound } from "../errors.ts";
import { applyFilter, type Filterable } from "../filter.ts";
import { pageRequest, paginate } from "../pagination.ts";
import { intParam } from "../router.ts";
import { nextId, type FirewallDeviceRecord, type FirewallRecord, type NodeBalancerRecord } from "../store.ts";
import { intRange, oneOf, parseBody } from "../validation.ts";
import { z } from "zod";

/** The firewall by id: assumed to exist unless deleted (see above). */
export function findFirewall(ctx: EmulatorContext, id: number): FirewallRecord {
  let fw = ctx.state.firewalls.get(id);
  if (fw === undefined) {
    fw = { id, label: `firewall-${String(id)}`, created: ctx.clock.now(), devices: [] };
    ctx.state.firewalls.set(id, fw);
  }
  if (fw.deleted === true) throw notFound();
  return fw;
}

/** The live firewalls assigned to a NodeBalancer. */
export function firewallsOf(ctx: EmulatorContext, nbId: number): FirewallRecord[] {
  return [...ctx.state.firewalls.values()].filter((f) => f.deleted !== true && (f.devices ?? []).some((d) => d.entity_id === nbId));
}

/** Assigns `fw` to `nb`, refused as the API would while it has one (see above). */
export function attachFirewall(ctx: EmulatorContext, fw: FirewallRecord, nb: NodeBalancerRecord): FirewallDeviceRecord {
  const current = firewallsOf(ctx, nb.id);
  if (current.some((f) => f.id === fw.id)) throw badRequest(`NodeBalancer ${nb.label} (ID ${String(nb.id)}) is already assigned to this Firewall`);
  if (current.length > 0) throw new ApiError(400, [{ reason: `Too many active firewalls attached to NodeBalancer ${nb.label} (ID ${String(nb.id)})` }]);
  const device: FirewallDeviceRecord = { id: nextId(ctx.state, "firewall_device"), entity_id: nb.id, entity_type: "nodebalancer", created: ctx.clock.now() };
  fw.devices = [...(fw.devices ?? []), device];
  return device;
}

/**
 * The NodeBalancer's firewalls replaced by `ids` at once: no request ever sees it between the
 * old list and the new one (the operator swaps a firewall this way, never leaving a NodeBalancer
 * without one). Guessed where the docs are silent:
 *  - every id is checked before anything changes; a deleted one is 400 "Firewall not found" on
 *    `firewall_ids` (as `firewall_id` at creation is, itself guessed);
 *  - an id listed twice counts once;
 *  - more than one is the reason recorded for a second active firewall (see the top of this file),
 *    without its field, as the device route answers it (every firewall is enabled here);
 *  - a firewall that stays keeps its device (its id), one that goes loses it, a new one gets one.
 */
export function replaceFirewalls(ctx: EmulatorContext, nb: NodeBalancerRecord, ids: readonly number[]): FirewallRecord[] {
  const wanted = [...new Set(ids)].map((id) => {
    try {
      return findFirewall(ctx, id);
    } catch {
      throw badRequest("Firewall not found", "firewall_ids");
    }
  });
  if (wanted.length > 1) throw new ApiError(400, [{ reason: `Too many active firewalls attached to NodeBalancer ${nb.label} (ID ${String(nb.id)})` }]);
  const keep = new Set(wanted.map((f) => f.id));
  for (const fw of firewallsOf(ctx, nb.id)) {
    if (!keep.has(fw.id)) fw.devices = (fw.devices ?? []).filter((d) => d.entity_id !== nb.id);
  }
  for (const fw of wanted) {
    if (!(fw.devices ?? []).some((d) => d.entity_id === nb.id)) {
      fw.devices = [...(fw.devices ?? []), { id: nextId(ctx.state, "firewall_device"), entity_id: nb.id, entity_type: "nodebalancer", created: ctx.clock.now() }];
    }
  }
  return firewallsOf(ctx, nb.id);
}

/** A deleted NodeBalancer is no firewall's device any more. */
export function forgetDevicesOf(ctx: EmulatorContext, nbId: number): void {
  for (const fw of ctx.state.firewalls.values()) {
    if (fw.devices?.some((d) => d.entity_id === nbId) === true) fw.devices = fw.devices.filter((d) => d.entity_id !== nbId);
  }
}

function entityOf(ctx: EmulatorContext, d: FirewallDeviceRecord): Record<string, unknown> {
  const nb = ctx.state.nodebalancers.get(d.entity_id);
  return { id: d.entity_id, type: d.entity_type, label: nb?.label ?? null, url: `/v4/nodebalancers/${String(d.entity_id)}`, parent_entity: null };
}

export function renderFirewall(ctx: EmulatorContext, fw: FirewallRecord): Record<string, unknown> {
  return {
    id: fw.id,
    label: fw.label,
    created: apiTime(fw.created),
    updated: apiTime(fw.created),
    status: "enabled",
    rules: {
      // Firewalls are managed elsewhere; one is shown with a typical web rule set.
      inbound: [{ protocol: "TCP", addresses: { ipv4: ["0.0.0.0/0"] }, action: "ACCEPT", label: "allow-http-https", ports: "80,443" }],
      inbound_policy: "DROP",
      outbound: [],
      outbound_policy: "ACCEPT",
      version: 1,
      fingerprint: fw.id.toString(16).padStart(8, "0").slice(-8),
    },
    tags: [],
    entities: (fw.devices ?? []).map((d) => entityOf(ctx, d)),
  };
}

function renderDevice(ctx: EmulatorContext, d: FirewallDeviceRecord): Record<string, unknown> {
  return { id: d.id, entity: entityOf(ctx, d), created: apiTime(d.created), updated: apiTime(d.created) };
}

const deviceCreateSchema = z.object({
  id: intRange(1, Number.MAX_SAFE_INTEGER),
  type: oneOf(["linode", "nodebalancer"]),
});

const DEVICE_FILTERS: Filterable = { id: (d: FirewallDeviceRecord) => d.id };

function load(req: RequestContext): FirewallRecord {
  requireUnrestricted(req.principal);
  return findFirewall(req.ctx, intParam(req.params, "firewallId"));
}

function loadDevice(req: RequestContext): { fw: FirewallRecord; device: FirewallDeviceRecord } {
  const fw = load(req);
  const device = (fw.devices ?? []).find((d) => d.id === intParam(req.params, "deviceId"));
  if (device === undefined) throw notFound();
  return { fw, device };
}

export function firewallRoutes(): Route[] {
  const one = "/networking/firewalls/{firewallId}";
  const devices = `${one}/devices`;
  const device = `${devices}/{deviceId}`;
  return [
    {
      method: "GET", template: one, area: "firewall", level: "read_only",
      handler: (req) => ({ body: renderFirewall(req.ctx, load(req)) }),
    },
    {
      method: "DELETE", template: one, area: "firewall", level: "read_write",
      handler: (req) => {
        // Deleting a firewall removes it from every service it was assigned to.
        const fw = load(req);
        fw.deleted = true;
        fw.devices = [];
        return { body: {} };
      },
    },
    {
      method: "GET", template: devices, area: "firewall", level: "read_only", paginated: true,
      handler: (req) => ({ body: paginate(applyFilter(load(req).devices ?? [], req.header("x-filter"), DEVICE_FILTERS), pageRequest(req.query), (d) => renderDevice(req.ctx, d)) }),
    },
    {
      method: "POST", template: devices, area: "firewall", level: "read_write",
      handler: (req) => {
        const fw = load(req);
        const input = parseBody(deviceCreateSchema, req.body);
        const nb = input.type === "nodebalancer" ? req.ctx.state.nodebalancers.get(input.id) : undefined;
        if (nb === undefined) throw notFound();
        requireEntity(req.principal, "nodebalancer", nb.id, "read_write");
        return { body: renderDevice(req.ctx, attachFirewall(req.ctx, fw, nb)) };
      },
    },
    {
      method: "GET", template: device, area: "firewall", level: "read_only",
      handler: (req) => ({ body: renderDevice(req.ctx, loadDevice(req).device) }),
    },
    {
      method: "DELETE", template: device, area: "firewall", level: "read_write",
      handler: (req) => {
        const { fw, device: d } = loadDevice(req);
        fw.devices = (fw.devices ?? []).filter((x) => x.id !== d.id);
        return { body: {} };
      },
    },
  ];
}
