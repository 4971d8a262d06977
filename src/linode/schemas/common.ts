// Building blocks for response schemas. Schemas describe the wire (snake_case) and are
// tolerant on purpose: unknown members are stripped, fields the API has dropped or added
// over time are optional, and enums accept values newer than the spec.
import { z } from "zod";

/** A string enum that also accepts values the spec does not list yet (typed as the known ones plus string). */
export function openEnum<const T extends readonly string[]>(_known: T): z.ZodType<T[number] | (string & {})> {
  return z.string();
}

export const optionalNullableString = z.string().nullish().transform((v) => v ?? null);
export const optionalNullableNumber = z.number().nullish().transform((v) => v ?? null);

export function envelope<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    page: z.number().int(),
    pages: z.number().int(),
    results: z.number().int(),
  });
}

/** `{}` from DELETE and the action endpoints; anything else in the body is ignored. */
export const emptySchema = z.object({}).transform((): undefined => undefined);

export const apiErrorItemSchema = z.object({
  reason: z.string(),
  field: z.string().optional(),
});

export const apiErrorBodySchema = z.object({
  errors: z.array(apiErrorItemSchema),
});
