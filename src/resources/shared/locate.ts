// Which cloud object a resource manages, and only that one (the ownership rule every kind
// shares): the id the user named, or the one recorded as created by this resource. Only after
// a create that may have been lost (create-pending) is one looked up by label and adopted; the
// derived label carries this cluster's identity, namespace and name, and an explicit label was
// checked free before the create. An explicit label someone else holds is LabelInUse.
import { ConditionReasons as R, TerminalError, type Managed } from "../../runtime/contract.ts";
import { labelInUse, linodeCall } from "./linode-errors.ts";

export interface Owned<T> {
  /** The kind, e.g. "NodeBalancer"; and what its cloud object is called, e.g. "database". */
  kind: string;
  what: string;
  /** The spec field that names an object to adopt, and its value. */
  idField: string;
  named: number | undefined;
  /** The condition reason when the named id is not the recorded one. */
  mismatchReason: string;
  label: string;
  byId(id: number): Promise<T | undefined>;
  byLabel(label: string): Promise<T | undefined>;
}

export async function locateOwned<Spec extends { label?: string | undefined }, T extends { id: number }>(m: Managed<Spec>, o: Owned<T>): Promise<T | undefined> {
  const deleting = m.obj.metadata.deletionTimestamp !== undefined;
  const recorded = m.externalId !== undefined ? Number(m.externalId) : undefined;
  if (o.named !== undefined && recorded !== undefined && o.named !== recorded && !deleting) {
    throw new TerminalError(o.mismatchReason, `spec.${o.idField} ${String(o.named)} names another ${o.what} than the one this resource manages (${String(recorded)}); nothing was changed: remove spec.${o.idField}, or create another ${o.kind} to adopt ${String(o.named)}`);
  }
  // Deleting deletes only what this resource recorded: an id it named but never adopted is not its own.
  const known = deleting ? recorded : (recorded ?? o.named);
  if (known !== undefined) {
    const found = await linodeCall(`reading the ${o.what}`, () => o.byId(known));
    if (found === undefined && o.named !== undefined && recorded === undefined && m.policies.management !== "Observe") {
      throw new TerminalError(R.NotFound, `spec.${o.idField} ${String(o.named)}: no ${o.what} with this id exists`);
    }
    return found;
  }
  if (m.createPending !== undefined && m.createUnsent !== true) {
    // The label the create was sent with, whatever the spec says now.
    const label = m.createPending.label ?? o.label;
    return linodeCall(`looking for a ${o.what} a lost create may have made`, () => o.byLabel(label));
  }
  if (m.spec.label !== undefined && !deleting) {
    const taken = await linodeCall("checking the label is free", () => o.byLabel(o.label));
    if (taken !== undefined) throw labelInUse(o.what, o.idField, o.label, taken.id);
  }
  return undefined;
}
