// What differs between the spec and the cloud database, as the fields of one update body.
// Only what the API can change is compared (label, allowList, type, maintenance window);
// the rest is immutable and enforced at admission.
import type { Database, DatabaseUpdateRequest } from "../../linode/index.ts";
import { normalizeAllowList, sameAllowList } from "./allow-list.ts";
import type { ManagedDatabaseSpec } from "./schema.ts";

export interface DatabaseDiff {
  update: DatabaseUpdateRequest;
  /** Human-readable summary, e.g. "allowList, type g6-nanode-1 → g6-standard-2". */
  summary: string;
}

export function diffDatabase(spec: ManagedDatabaseSpec, label: string, db: Database): DatabaseDiff {
  const update: DatabaseUpdateRequest = {};
  const parts: string[] = [];
  if (db.label !== label) {
    update.label = label;
    parts.push(`label ${db.label} → ${label}`);
  }
  if (!sameAllowList(spec.allowList, db.allowList)) {
    update.allowList = normalizeAllowList(spec.allowList);
    parts.push("allowList");
  }
  if (db.type !== spec.type) {
    update.type = spec.type;
    parts.push(`type ${db.type} → ${spec.type}`);
  }
  const want = spec.updates;
  const have = db.updates;
  if (want !== undefined) {
    const same = have !== null
      && have.frequency === want.frequency && have.duration === want.duration
      && have.hourOfDay === want.hourOfDay && have.dayOfWeek === want.dayOfWeek
      && (want.frequency !== "monthly" || have.weekOfMonth === want.weekOfMonth);
    if (!same) {
      update.updates = {
        frequency: want.frequency, duration: want.duration, hourOfDay: want.hourOfDay, dayOfWeek: want.dayOfWeek,
        ...(want.weekOfMonth !== undefined ? { weekOfMonth: want.weekOfMonth } : {}),
      };
      parts.push("updates (maintenance window)");
    }
  }
  return { update, summary: parts.join(", ") };
}

export const isEmptyDiff = (d: DatabaseDiff): boolean => Object.keys(d.update).length === 0;
