// Resource locks (spec 4.234.0, BETA), shaped as recorded (F:TestLocks, 2026-07): `{id, lock_type,
// entity:{id, type, label, url}}`. The spec's POST answer differs (an `entity` string enum); the
// recorded shape is what the GET list item and the recordings agree on.
import { z } from "zod";
import { envelope, openEnum } from "./common.ts";

export const lockTypes = ["cannot_delete", "cannot_delete_with_subresources"] as const;

export const lockSchema = z.object({
  id: z.number().int(),
  lock_type: openEnum(lockTypes),
  entity: z.object({
    id: z.number().int(),
    type: z.string(),
    label: z.string().nullish().transform((v) => v ?? null),
    url: z.string().nullish().transform((v) => v ?? null),
  }),
});
export const lockListSchema = envelope(lockSchema);
