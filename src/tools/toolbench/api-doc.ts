// The StableToolBench `api_list` entry (an API's documentation), read leniently: missing fields get defaults.
import { z } from "zod"

export const ApiParameter = z.looseObject({
  name: z.string(),
  type: z.string().nullish().transform((t) => t ?? "STRING"),
  description: z.string().nullish().transform((d) => d ?? ""),
  default: z.unknown().optional()
})
export type ApiParameter = z.infer<typeof ApiParameter>

const text = (fallback: string) => z.string().nullish().transform((s) => s ?? fallback)

export const ApiDoc = z.looseObject({
  category_name: text(""),
  tool_name: z.string(),
  api_name: z.string(),
  api_description: text(""),
  required_parameters: z.array(ApiParameter).nullish().transform((p) => p ?? []),
  optional_parameters: z.array(ApiParameter).nullish().transform((p) => p ?? []),
  method: text("GET"),
  /** The response's shape as StableToolBench records it: an object of type names, or its text. */
  template_response: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown()), z.string()]).nullish()
})
export type ApiDoc = z.infer<typeof ApiDoc>
export type ApiDocInput = z.input<typeof ApiDoc>
