// The emulator's configuration (file, admin endpoint, or startEmulator's `config`), zod-checked.
import { z } from "zod";
import { tokenSchema, userSchema, validateScopes } from "./auth.ts";
import { faultConfigSchema } from "./faults.ts";
import { latencySchema } from "./latency.ts";
import { rateLimitConfigSchema } from "./rate-limit.ts";

export const scopedTokenSchema = tokenSchema.superRefine((t, c) => {
  const problem = validateScopes(t.scopes);
  if (problem !== null) c.addIssue({ code: "custom", message: problem, path: ["scopes"] });
});

export const emulatorConfigSchema = z.object({
  tokens: z.array(scopedTokenSchema).default([]),
  users: z.array(userSchema).default([]),
  rateLimits: rateLimitConfigSchema.prefault({}),
  faults: faultConfigSchema.prefault({}),
  /** Every /v4 request waits a draw of this before it is handled (default none). */
  latency: latencySchema.optional(),
  provisionSeconds: z.number().min(0).optional(),
  timeScale: z.number().min(0).optional(),
  seed: z.number().int().optional(),
  statsDelaySeconds: z.number().min(0).optional(),
  /** The platform new databases get: the spec's ("legacy", default) or today's real API's ("current"). */
  platform: z.enum(["legacy", "current"]).optional(),
  /** Offer the Valkey engine (limited availability: listed in GET /databases/engines and creatable only then). */
  valkey: z.boolean().optional(),
});

export type EmulatorConfig = z.infer<typeof emulatorConfigSchema>;
export type EmulatorConfigInput = z.input<typeof emulatorConfigSchema>;
