// Cloud Firewalls as far as a NodeBalancer needs them: whether one exists, and assigning it to
// or removing it from a NodeBalancer through its devices. These routes are beyond the spec's
// NodeBalancer document (which offers `firewall_id` at creation only); they are the real API's
// networking routes (reference/openapi-subset.json), the ones linodego's CreateFirewallDevice
// and DeleteFirewallDevice call.
import type { z } from "zod";
import type { Camelize } from "./case.ts";
import type { CallOptions, Transport } from "./http.ts";
import { listAll, listPage, type ListAllOptions, type ListOptions } from "./listing.ts";
import type { Page } from "./pagination.ts";
import { emptySchema } from "./schemas/common.ts";
import { firewallDeviceListSchema, firewallDeviceSchema } from "./schemas/firewalls.ts";
import { firewallSchema } from "./schemas/nodebalancers.ts";
import type { Firewall } from "./nodebalancers.ts";

export type FirewallDevice = Camelize<z.output<typeof firewallDeviceSchema>>;

export interface FirewallDeviceCreateRequest {
  /** The entity's id (here a NodeBalancer's). */
  id: number;
  type: "nodebalancer" | "linode";
}

const ONE = "/networking/firewalls/{firewallId}";
const DEVICES = `${ONE}/devices`;
const DEVICE = `${DEVICES}/{deviceId}`;

export class FirewallsApi {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  get(firewallId: number, opts?: CallOptions): Promise<Firewall> {
    return this.transport.request({ method: "GET", route: ONE, params: { firewallId }, schema: firewallSchema }, opts);
  }

  listDevices(firewallId: number, opts?: ListOptions): Promise<Page<FirewallDevice>> {
    return listPage(this.transport, DEVICES, { firewallId }, firewallDeviceListSchema, opts);
  }

  listAllDevices(firewallId: number, opts?: ListAllOptions): Promise<FirewallDevice[]> {
    return listAll(this.transport, DEVICES, { firewallId }, firewallDeviceListSchema, opts);
  }

  /**
   * Assigns the firewall to the entity. A NodeBalancer takes one enabled firewall at a time (the
   * API answers 400 "Too many active firewalls attached" otherwise): one in place of another is
   * NodeBalancersApi.updateFirewalls. Not retried after an ambiguous failure: the next
   * observation shows whether it happened.
   */
  createDevice(firewallId: number, req: FirewallDeviceCreateRequest, opts?: CallOptions): Promise<FirewallDevice> {
    return this.transport.request({ method: "POST", route: DEVICES, params: { firewallId }, body: req, schema: firewallDeviceSchema }, opts);
  }

  deleteDevice(firewallId: number, deviceId: number, opts?: CallOptions): Promise<void> {
    return this.transport.request({ method: "DELETE", route: DEVICE, params: { firewallId, deviceId }, schema: emptySchema }, opts);
  }
}
