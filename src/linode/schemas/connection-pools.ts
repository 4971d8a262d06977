// PostgreSQL connection pool responses (PgBouncer; spec 4.234.0 only, no client has them): a pool has no
// id, host, port, status or timestamps, and is addressed by its label. Nothing is recorded of
// the real API's answers: the spec's shape, tolerant as every response schema is.
import { z } from "zod";
import { envelope, openEnum } from "./common.ts";

export const connectionPoolModes = ["session", "statement", "transaction"] as const;

export const connectionPoolSchema = z.object({
  label: z.string(),
  /** The spec gives it a default but does not list it among the required: absent reads as the default. */
  database: z.string().nullish().transform((v) => v ?? "defaultdb"),
  mode: openEnum(connectionPoolModes),
  size: z.number().int(),
  /** null: the pool reuses the inbound (connecting) user. */
  username: z.string().nullish().transform((v) => v ?? null),
});
export const connectionPoolListSchema = envelope(connectionPoolSchema);
