// zod helpers that read a parsed Python value (`parsePyJson`) the way pydantic validates it into a model, so that the
// model's dump (field order, None defaults, floats) is what τ² hashes and shows.
import { z } from "zod"

const mapToObject = (v: unknown): unknown => (v instanceof Map ? Object.fromEntries(v) : v)

/**
 * A pydantic model: fields in declaration order (the order `model_dump` writes), unknown fields dropped as pydantic's
 * default `extra="ignore"` does; `strict` refuses them (`extra="forbid"`, τ²'s database root).
 */
export const pyModel = <Shape extends z.ZodRawShape>(shape: Shape, options: { strict?: boolean } = {}) =>
  z.preprocess(mapToObject, options.strict === true ? z.strictObject(shape) : z.object(shape))

/** A `Dict[str, T]`: a Map, so that its keys keep their order (item ids are integer-like). */
export const pyDict = <T extends z.ZodType>(value: T) => z.map(z.string(), value)

/** A `float` field: a JSON int becomes a float, as pydantic converts it. */
export const pyFloat = () => z.preprocess((v) => (typeof v === "bigint" ? Number(v) : v), z.number())

/** An `Optional[T]` field with default None: absent in the file, `null` in the dump. */
export const pyOptional = <T extends z.ZodType>(value: T) => value.nullable().default(null)
