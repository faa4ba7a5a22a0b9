// A tiny llama-architecture GGUF v3 model with seeded random weights, for tests and demos of the embedded engine:
// no weights can be downloaded in CI, so a real llama.cpp runs on one of these. It writes garbage, but short,
// printable garbage that ends (one embedding dimension is pinned, so its column of `output.weight` biases tokens).
//
//   node scripts/tiny-gguf.ts [out.gguf] [--seed N]
import { mkdirSync, renameSync, writeFileSync } from "node:fs"
import { dirname, resolve } from "node:path"

/** The shape of the generated model. */
export interface TinyGgufOptions {
  /** The PRNG's seed: the same seed writes the same bytes. */
  readonly seed?: number | undefined
  readonly embedding?: number | undefined
  readonly blocks?: number | undefined
  readonly heads?: number | undefined
  readonly feedForward?: number | undefined
  readonly contextLength?: number | undefined
}

export const TINY_GGUF_DEFAULTS = {
  seed: 1,
  embedding: 64,
  blocks: 2,
  heads: 4,
  feedForward: 128,
  contextLength: 32768
} as const

// GGUF value types and ggml tensor types used here
const UINT32 = 4
const INT32 = 5
const FLOAT32 = 6
const BOOL = 7
const STRING = 8
const ARRAY = 9
const GGML_F32 = 0
const GGML_F16 = 1
const ALIGNMENT = 32
/** The pinned dimension's value (see tinyGgufBytes). */
const PIN = 4

// tokenizer.ggml.token_type
const NORMAL = 1
const UNKNOWN = 2
const CONTROL = 3
const BYTE = 6

/** ChatML, the template node-llama-cpp recognises as its ChatML wrapper. */
export const CHATML_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"

interface Token {
  readonly piece: string
  readonly type: number
  /** Added to the token's logit at every step (through the pinned dimension). */
  readonly bias: number
}

/**
 * The vocabulary: `<unk> <s> </s>`, the 256 byte-fallback tokens, the printable ASCII pieces and `▁` (SPM's space),
 * `<|im_start|> <|im_end|>`. Biases keep the garbage printable JSON-friendly and short: controls and bytes never,
 * a closing quote and the end of turn often, no exponent letters (a grammar's number may otherwise take one).
 */
const vocabulary = (): Array<Token> => {
  const tokens: Array<Token> = [
    { piece: "<unk>", type: UNKNOWN, bias: -30 },
    { piece: "<s>", type: CONTROL, bias: -30 },
    { piece: "</s>", type: CONTROL, bias: -30 }
  ]
  for (let b = 0; b < 256; b++)
    tokens.push({ piece: `<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`, type: BYTE, bias: -30 })
  for (let c = 0x21; c <= 0x7e; c++) {
    const piece = String.fromCharCode(c)
    const bias = piece === '"' ? 3 : piece === "e" || piece === "E" ? -30 : /[a-z]/.test(piece) ? 0.5 : 0
    tokens.push({ piece, type: NORMAL, bias })
  }
  tokens.push({ piece: "\u2581", type: NORMAL, bias: 0.5 })
  // letter pairs (and a space before a letter), so that English takes about half the tokens of its characters and
  // the tests' prompts evaluate twice as fast
  const letters = "abcdefghijklmnopqrstuvwxyz"
  for (const a of `\u2581${letters}`) for (const b of letters) tokens.push({ piece: a + b, type: NORMAL, bias: 0 })
  tokens.push({ piece: "<|im_start|>", type: CONTROL, bias: -30 })
  tokens.push({ piece: "<|im_end|>", type: CONTROL, bias: 2.5 })
  return tokens
}

/** mulberry32: a small seeded PRNG, so that a seed always gives the same bytes. */
const prng = (seed: number) => {
  let a = seed >>> 0
  return (): number => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** An IEEE half float's bits (round to nearest), for F16 tensors. */
const toHalf = (value: number): number => {
  const f = new Float32Array([value])
  const x = new Uint32Array(f.buffer)[0]!
  const sign = (x >>> 16) & 0x8000
  const exponent = ((x >>> 23) & 0xff) - 127 + 15
  const mantissa = x & 0x7fffff
  if (exponent <= 0) return sign // tiny: zero
  if (exponent >= 31) return sign | 0x7c00 // huge: infinity
  const half = sign | (exponent << 10) | (mantissa >>> 13)
  return mantissa & 0x1000 ? half + 1 : half
}

/** A growing little-endian byte buffer. */
class Writer {
  private buffer = Buffer.alloc(1 << 16)
  length = 0
  private room(n: number) {
    if (this.length + n <= this.buffer.length) return
    const bigger = Buffer.alloc(Math.max(this.buffer.length * 2, this.length + n))
    this.buffer.copy(bigger, 0, 0, this.length)
    this.buffer = bigger
  }
  u32(v: number) {
    this.room(4)
    this.buffer.writeUInt32LE(v, this.length)
    this.length += 4
  }
  i32(v: number) {
    this.room(4)
    this.buffer.writeInt32LE(v, this.length)
    this.length += 4
  }
  u64(v: number) {
    this.room(8)
    this.buffer.writeBigUInt64LE(BigInt(v), this.length)
    this.length += 8
  }
  f16s(values: Float32Array) {
    this.room(values.length * 2)
    for (const v of values) {
      this.buffer.writeUInt16LE(toHalf(v), this.length)
      this.length += 2
    }
  }
  f32(v: number) {
    this.room(4)
    this.buffer.writeFloatLE(v, this.length)
    this.length += 4
  }
  u8(v: number) {
    this.room(1)
    this.buffer.writeUInt8(v, this.length)
    this.length += 1
  }
  str(s: string) {
    const bytes = Buffer.from(s, "utf8")
    this.u64(bytes.length)
    this.room(bytes.length)
    bytes.copy(this.buffer, this.length)
    this.length += bytes.length
  }
  floats(values: Float32Array) {
    this.room(values.byteLength)
    Buffer.from(values.buffer, values.byteOffset, values.byteLength).copy(this.buffer, this.length)
    this.length += values.byteLength
  }
  pad(alignment: number) {
    while (this.length % alignment !== 0) this.u8(0)
  }
  bytes(): Buffer {
    return this.buffer.subarray(0, this.length)
  }
}

type Value =
  | { readonly type: typeof UINT32 | typeof INT32 | typeof FLOAT32; readonly value: number }
  | { readonly type: typeof BOOL; readonly value: boolean }
  | { readonly type: typeof STRING; readonly value: string }
  | {
      readonly type: typeof ARRAY
      readonly of: typeof INT32 | typeof FLOAT32 | typeof STRING
      readonly value: unknown[]
    }

const writeScalar = (w: Writer, type: number, value: unknown) => {
  if (type === UINT32) w.u32(value as number)
  else if (type === INT32) w.i32(value as number)
  else if (type === FLOAT32) w.f32(value as number)
  else if (type === BOOL) w.u8(value ? 1 : 0)
  else w.str(value as string)
}

interface Tensor {
  readonly name: string
  /** ggml order: the first dimension is the contiguous one. */
  readonly dims: ReadonlyArray<number>
  readonly data: Float32Array
}

/** Matrices are F16 (half the file), norms F32 as llama.cpp wants them. */
const bytesOf = (t: Tensor): number => t.data.length * (t.dims.length > 1 ? 2 : 4)

/** The bytes of a tiny model: deterministic for a seed and shape. */
export const tinyGgufBytes = (options: TinyGgufOptions = {}): Buffer => {
  const o = { ...TINY_GGUF_DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) }
  const random = prng(o.seed)
  // roughly normal: the sum of three uniforms, centred
  const normal = (std: number) => (random() + random() + random() - 1.5) * 2 * std
  const tokens = vocabulary()
  const vocab = tokens.length
  const n = o.embedding
  const headDim = n / o.heads
  const matrix = (cols: number, rows: number, std: number) => {
    const m = new Float32Array(cols * rows)
    for (let i = 0; i < m.length; i++) m[i] = normal(std)
    return m
  }
  const ones = (size: number) => new Float32Array(size).fill(1)
  // Dimension 0 of the residual stream is pinned to PIN: every token embeds it so and no block writes it (the rows
  // of attn_output and ffn_down that feed it are zero). It outweighs the other dimensions, so after the final norm it
  // is close to PIN, and `output.weight`'s column 0 (bias / PIN) adds about `bias` to each token's logit.
  const embeddings = matrix(n, vocab, 1)
  for (let t = 0; t < vocab; t++) embeddings[t * n] = PIN
  const output = matrix(n, vocab, 0.05)
  for (let t = 0; t < vocab; t++) output[t * n] = tokens[t]!.bias / PIN
  const unpinned = (m: Float32Array, cols: number) => {
    // ggml [cols, rows]: row r is the output feature r; row 0 writes dimension 0
    for (let c = 0; c < cols; c++) m[c] = 0
    return m
  }
  const tensors: Array<Tensor> = [
    { name: "token_embd.weight", dims: [n, vocab], data: embeddings },
    { name: "output_norm.weight", dims: [n], data: ones(n) },
    { name: "output.weight", dims: [n, vocab], data: output }
  ]
  for (let b = 0; b < o.blocks; b++) {
    const p = `blk.${b}.`
    tensors.push(
      { name: `${p}attn_norm.weight`, dims: [n], data: ones(n) },
      { name: `${p}attn_q.weight`, dims: [n, n], data: matrix(n, n, 0.2) },
      { name: `${p}attn_k.weight`, dims: [n, n], data: matrix(n, n, 0.2) },
      { name: `${p}attn_v.weight`, dims: [n, n], data: matrix(n, n, 0.2) },
      { name: `${p}attn_output.weight`, dims: [n, n], data: unpinned(matrix(n, n, 0.1), n) },
      { name: `${p}ffn_norm.weight`, dims: [n], data: ones(n) },
      { name: `${p}ffn_gate.weight`, dims: [n, o.feedForward], data: matrix(n, o.feedForward, 0.2) },
      { name: `${p}ffn_up.weight`, dims: [n, o.feedForward], data: matrix(n, o.feedForward, 0.2) },
      {
        name: `${p}ffn_down.weight`,
        dims: [o.feedForward, n],
        data: unpinned(matrix(o.feedForward, n, 0.1), o.feedForward)
      }
    )
  }
  const id = (piece: string) => tokens.findIndex((t) => t.piece === piece)
  const metadata: Array<[string, Value]> = [
    ["general.architecture", { type: STRING, value: "llama" }],
    ["general.name", { type: STRING, value: `smurfs-tiny-seed${o.seed}` }],
    ["general.file_type", { type: UINT32, value: 1 }],
    ["general.alignment", { type: UINT32, value: ALIGNMENT }],
    ["llama.context_length", { type: UINT32, value: o.contextLength }],
    ["llama.embedding_length", { type: UINT32, value: n }],
    ["llama.block_count", { type: UINT32, value: o.blocks }],
    ["llama.feed_forward_length", { type: UINT32, value: o.feedForward }],
    ["llama.attention.head_count", { type: UINT32, value: o.heads }],
    ["llama.attention.head_count_kv", { type: UINT32, value: o.heads }],
    ["llama.rope.dimension_count", { type: UINT32, value: headDim }],
    ["llama.attention.layer_norm_rms_epsilon", { type: FLOAT32, value: 1e-5 }],
    ["llama.vocab_size", { type: UINT32, value: vocab }],
    ["tokenizer.ggml.model", { type: STRING, value: "llama" }],
    ["tokenizer.ggml.tokens", { type: ARRAY, of: STRING, value: tokens.map((t) => t.piece) }],
    // SPM merges pieces by score; single characters need none, but llama.cpp reads them
    [
      "tokenizer.ggml.scores",
      {
        type: ARRAY,
        of: FLOAT32,
        value: tokens.map((t, i) => (t.type === NORMAL && [...t.piece].length > 1 ? 0 : -1000) - i / 1000)
      }
    ],
    ["tokenizer.ggml.token_type", { type: ARRAY, of: INT32, value: tokens.map((t) => t.type) }],
    ["tokenizer.ggml.bos_token_id", { type: UINT32, value: id("<s>") }],
    ["tokenizer.ggml.eos_token_id", { type: UINT32, value: id("<|im_end|>") }],
    ["tokenizer.ggml.unknown_token_id", { type: UINT32, value: id("<unk>") }],
    ["tokenizer.ggml.add_bos_token", { type: BOOL, value: true }],
    ["tokenizer.ggml.add_eos_token", { type: BOOL, value: false }],
    ["tokenizer.chat_template", { type: STRING, value: CHATML_TEMPLATE }]
  ]
  const w = new Writer()
  w.u32(0x46554747) // "GGUF"
  w.u32(3)
  w.u64(tensors.length)
  w.u64(metadata.length)
  for (const [key, value] of metadata) {
    w.str(key)
    w.u32(value.type)
    if (value.type === ARRAY) {
      w.u32(value.of)
      w.u64(value.value.length)
      for (const item of value.value) writeScalar(w, value.of, item)
    } else writeScalar(w, value.type, value.value)
  }
  let offset = 0
  for (const t of tensors) {
    w.str(t.name)
    w.u32(t.dims.length)
    for (const d of t.dims) w.u64(d)
    w.u32(t.dims.length > 1 ? GGML_F16 : GGML_F32)
    w.u64(offset)
    offset += Math.ceil(bytesOf(t) / ALIGNMENT) * ALIGNMENT
  }
  w.pad(ALIGNMENT)
  for (const t of tensors) {
    if (t.dims.length > 1) w.f16s(t.data)
    else w.floats(t.data)
    w.pad(ALIGNMENT)
  }
  return w.bytes()
}

/** Write a tiny model to `path` (atomically: a reader never sees half a file); returns the path. */
export const writeTinyGguf = (path: string, options: TinyGgufOptions = {}): string => {
  const target = resolve(path)
  mkdirSync(dirname(target), { recursive: true })
  const partial = `${target}.${process.pid}.partial`
  writeFileSync(partial, tinyGgufBytes(options))
  renameSync(partial, target)
  return target
}

const isMain = import.meta.url === `file://${process.argv[1] ? resolve(process.argv[1]) : ""}`
if (isMain) {
  const args = process.argv.slice(2)
  const seedAt = args.indexOf("--seed")
  const seed = seedAt >= 0 ? Number(args[seedAt + 1]) : TINY_GGUF_DEFAULTS.seed
  const out = args.find((a, i) => !a.startsWith("--") && args[i - 1] !== "--seed") ?? "tiny.gguf"
  if (!Number.isInteger(seed)) {
    console.error("--seed takes an integer")
    process.exit(2)
  }
  const written = writeTinyGguf(out, { seed })
  console.log(`wrote ${written} (seed ${seed})`)
}
