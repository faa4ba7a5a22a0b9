// The embedded llama.cpp engine (node-llama-cpp, an optional peer loaded on first use): one loaded model and one
// context per file and settings, a context sequence per request in flight (each keeps the prefix of the task it last
// served in its KV cache), JSON-schema grammars for structured replies and for tool calls, our own errors.
import { appendFileSync, closeSync, openSync, readSync, statSync } from "node:fs"
import { cpus } from "node:os"
import type * as NodeLlama from "node-llama-cpp"
import { LLAMA_PEERS, MissingPeerPackage, missingPeerPackage, missingPeers } from "../peer-packages.ts"
import { renderTemplate } from "../text/prompt-template.ts"
import { ContextOverflow, ModelServerError, type ProviderError, Timeout } from "./errors.ts"
import type { GenerateRequest, GenerateResponse, Message, ToolCallRequest } from "./language-model.ts"
import { grammarSchema, schemaTokens, toolCallSchema } from "./llama-grammar.ts"
import { isSourceFailure, resolveModelSource } from "./model-source.ts"
import type { ModelTaskKey } from "./model-task.ts"
import { NestingTooDeep, parseJsonBounded } from "./nesting.ts"
import { replyWithThinking } from "./thinking.ts"

/** Everything the engine needs, defaults applied. */
export interface LlamaSettings {
  /** What follows `llama:` (a file, hf:..., a URL, or empty for the default model). */
  readonly source: string
  /** Tokens of each sequence's context; undefined: the default, or the model's trained context when smaller. */
  readonly contextSize: number | undefined
  /** Sequences of the one context: requests in flight at once. */
  readonly sequences: number
  readonly threads: number
  /** "auto" uses a GPU when a prebuilt binary for it works here; false never. */
  readonly gpu: "auto" | false | "cuda" | "vulkan" | "metal"
  readonly timeoutMs: number
  readonly seed: number
  readonly temperature: number
}

/** Tokens of a context when nothing says otherwise (the model's trained context when smaller). */
export const LLAMA_DEFAULT_CONTEXT = 8192
/** Tokens of a plain-text reply when the request sets no limit. */
export const LLAMA_DEFAULT_MAX_TOKENS = 1024

/** Ollama's defaults (repeat_penalty 1.1 over the last 64 tokens), so that a model behaves here as it does there. */
const REPEAT_PENALTY = { lastTokens: 64, penalty: 1.1 } as const

/** Threads when nothing says otherwise: one per CPU. */
export const defaultThreads = (): number => Math.max(1, cpus().length)

/** Why a model file cannot be used, as a whole message (the layer's InvalidModelSpec says it as it is). */
export class ModelFileError extends Error {
  override readonly name = "ModelFileError"
}

/** The GGUF header check: the magic and a version llama.cpp reads, before anything is loaded. */
export const checkGgufHeader = (path: string): void => {
  const size = statSync(path).size
  const header = Buffer.alloc(8)
  const fd = openSync(path, "r")
  try {
    readSync(fd, header, 0, 8, 0)
  } finally {
    closeSync(fd)
  }
  if (size < 8 || header.toString("latin1", 0, 4) !== "GGUF")
    throw new ModelFileError(
      `The model file ${path} is not a GGUF file (it does not start with "GGUF"). llama: takes llama.cpp's .gguf models; convert others with llama.cpp's convert_hf_to_gguf.py.`
    )
  const version = header.readUInt32LE(4)
  if (version < 2 || version > 3)
    throw new ModelFileError(`The model file ${path} is GGUF version ${version}; llama.cpp reads versions 2 and 3.`)
}

type Module = typeof NodeLlama
let module: Promise<Module> | undefined
/** node-llama-cpp, imported on the first `llama:` model (never by `import "smurfs"`); MissingPeerPackage when absent. */
export const loadNodeLlama = (): Promise<Module> => {
  if (module === undefined) {
    const missing = missingPeers(LLAMA_PEERS)
    if (missing.length > 0) return Promise.reject(missingPeerPackage(LLAMA_PEERS, missing))
    module = import("node-llama-cpp")
  }
  return module
}

/** llama.cpp's last error lines, for the message of a model that failed to load. */
const engineLog: Array<string> = []

const llamas = new Map<string, Promise<NodeLlama.Llama>>()
/** The llama.cpp binding for a GPU setting, loaded once per process; never compiled here (`build: "never"`). */
export const llamaBinding = (gpu: LlamaSettings["gpu"]): Promise<NodeLlama.Llama> => {
  const key = String(gpu)
  let llama = llamas.get(key)
  if (llama === undefined) {
    llama = loadNodeLlama().then(async (m) => {
      try {
        return await m.getLlama({
          build: "never",
          gpu,
          logLevel: m.LlamaLogLevel.error,
          // llama.cpp's errors are kept for our own message (a load that failed says why), not printed
          logger: (_level, message) => {
            engineLog.push(message.trim())
            if (engineLog.length > 8) engineLog.shift()
            if (process.env["SMURFS_DEBUG"] === "1") process.stderr.write(`[llama.cpp] ${message}\n`)
          },
          progressLogs: false
        })
      } catch (e) {
        if (e instanceof m.NoBinaryFoundError)
          throw new ModelFileError(
            `node-llama-cpp has no prebuilt llama.cpp binary for this machine (${process.platform}-${process.arch}${gpu === false || gpu === "auto" ? "" : `, ${gpu}`}), and smurfs never compiles one at run time. Build it once with \`npx --no node-llama-cpp source download\`, or use an Ollama model.`
          )
        throw e
      }
    })
    // a failure is not kept: the next model tries again
    llama.catch(() => llamas.delete(key))
    llamas.set(key, llama)
  }
  return llama
}

/** One context sequence and the chat bound to it. */
interface Slot {
  readonly sequence: NodeLlama.LlamaContextSequence
  readonly chat: NodeLlama.LlamaChat
  busy: boolean
  /** The start of the last prompt it evaluated: a request that shares it reuses the sequence's KV cache. */
  lastPrefix: string
  lastUsed: number
  /** The task whose requests it serves (`ModelTask`): its next request comes back here while it lives. */
  owner: ModelTaskKey | undefined
}

/** A loaded model, its context and its sequences. */
export interface LlamaEngine {
  readonly path: string
  readonly model: NodeLlama.LlamaModel
  readonly context: NodeLlama.LlamaContext
  readonly contextSize: number
  readonly llama: NodeLlama.Llama
  readonly module: Module
  readonly slots: ReadonlyArray<Slot>
  /** Requests waiting for a free sequence. */
  readonly waiting: Array<() => void>
  /** Grammars by schema text: agents reuse a few schemas on every call. */
  readonly grammars: Map<string, Promise<NodeLlama.LlamaGrammar>>
  /** Input tokens evaluated and sent, summed over the engine's requests (a prefix kept in the KV cache is sent, not evaluated). */
  readonly meter: { evaluated: number; sent: number; generated: number }
  readonly dispose: () => Promise<void>
}

/** Load the model a source names, create its context with `settings.sequences` sequences. */
export const loadEngine = async (settings: LlamaSettings, signal?: AbortSignal): Promise<LlamaEngine> => {
  // the package first: without it nothing else is worth checking (or downloading)
  const m = await loadNodeLlama()
  const path = await resolveModelSource(settings.source, { signal })
  checkGgufHeader(path)
  const llama = await llamaBinding(settings.gpu)
  let model: NodeLlama.LlamaModel
  engineLog.length = 0
  try {
    model = await llama.loadModel({ modelPath: path, ...(signal ? { loadSignal: signal } : {}) })
  } catch (e) {
    // llama.cpp's first error line that says more than "failed to load model"
    const said = engineLog
      .map((line) => line.replace(/^.*error loading model:\s*/, "").replace(/^[a-z_]+:\s*/, ""))
      .find((line) => !/failed to load model/.test(line))
    throw new ModelFileError(
      `The model file ${path} could not be loaded by llama.cpp (${said ?? firstLine(e)}): it may be truncated (an interrupted download) or not a llama.cpp model. Download it again.`
    )
  }
  const wanted =
    settings.contextSize ?? Math.min(LLAMA_DEFAULT_CONTEXT, model.trainContextSize || LLAMA_DEFAULT_CONTEXT)
  let context: NodeLlama.LlamaContext
  try {
    context = await model.createContext({
      contextSize: wanted,
      sequences: settings.sequences,
      threads: settings.threads,
      ...(signal ? { createSignal: signal } : {})
    })
  } catch (e) {
    await model.dispose()
    throw new ModelFileError(
      `llama.cpp could not create a context of ${wanted} tokens × ${settings.sequences} sequences for ${path} (${firstLine(e)}). Lower --num-ctx or --concurrency.`
    )
  }
  const slots: Array<Slot> = []
  for (let i = 0; i < settings.sequences; i++) {
    const sequence = context.getSequence()
    slots.push({
      sequence,
      chat: new m.LlamaChat({ contextSequence: sequence, autoDisposeSequence: false }),
      busy: false,
      lastPrefix: "",
      lastUsed: 0,
      owner: undefined
    })
  }
  return {
    path,
    model,
    context,
    contextSize: context.contextSize,
    llama,
    module: m,
    slots,
    waiting: [],
    grammars: new Map(),
    meter: { evaluated: 0, sent: 0, generated: 0 },
    dispose: async () => {
      for (const slot of slots) slot.chat.dispose({ disposeSequence: true })
      await context.dispose()
      await model.dispose()
    }
  }
}

const firstLine = (e: unknown): string =>
  (e instanceof Error ? e.message : String(e)).split("\n")[0]?.slice(0, 300) ?? "unknown error"

/** Why loading failed, as a whole message for the user; a bug stays a bug. */
export const loadFailureMessage = (e: unknown): string | undefined =>
  e instanceof ModelFileError || isSourceFailure(e) || e instanceof MissingPeerPackage ? e.message : undefined

/** The text a request's prompt starts with, to send it to the sequence whose cache holds the most of it. */
const prefixOf = (messages: ReadonlyArray<Message>): string =>
  messages
    .slice(0, 2)
    .map((m) => m.content)
    .join("\n")
    .slice(0, 4000)

const commonPrefix = (a: string, b: string): number => {
  const n = Math.min(a.length, b.length)
  let i = 0
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++
  return i
}

/**
 * A free sequence: the one of the task's model lane (`lane`: sequence i for lane i, so that each task holding a lane
 * has its own), else the task's own (the one it used last, `task`), else one no live task holds, else any; among
 * those, the one whose last prompt shares the longest start with this one. Waits when all are busy. Without the task,
 * a new task's first request (which shares only the system text with every sequence) could take the sequence of a
 * task that is between two requests (calling a tool), whose next request would then compute its prefix again.
 */
const acquireSlot = (
  engine: LlamaEngine,
  prefix: string,
  signal: AbortSignal,
  task: ModelTaskKey | undefined,
  lane?: number
): Promise<Slot> =>
  new Promise((resolve, reject) => {
    const attempt = () => {
      const free = engine.slots.filter((s) => !s.busy)
      if (free.length === 0) return false
      const laned = task === undefined || lane === undefined ? undefined : engine.slots[lane % engine.slots.length]
      const own =
        laned !== undefined && !laned.busy ? laned : task === undefined ? undefined : free.find((s) => s.owner === task)
      const unheld = free.filter((s) => s.owner === undefined || s.owner.ended)
      const candidates = own !== undefined ? [own] : task !== undefined && unheld.length > 0 ? unheld : free
      let best = candidates[0]!
      let bestShared = -1
      for (const slot of candidates) {
        const shared = commonPrefix(slot.lastPrefix, prefix)
        if (shared > bestShared || (shared === bestShared && slot.lastUsed < best.lastUsed)) {
          best = slot
          bestShared = shared
        }
      }
      best.busy = true
      if (task !== undefined) best.owner = task
      resolve(best)
      return true
    }
    if (attempt()) return
    const waiter = () => {
      if (!attempt()) engine.waiting.push(waiter)
      else signal.removeEventListener("abort", onAbort)
    }
    const onAbort = () => {
      const at = engine.waiting.indexOf(waiter)
      if (at >= 0) engine.waiting.splice(at, 1)
      reject(signal.reason)
    }
    signal.addEventListener("abort", onAbort, { once: true })
    engine.waiting.push(waiter)
  })

const releaseSlot = (engine: LlamaEngine, slot: Slot, prefix: string) => {
  slot.busy = false
  slot.lastPrefix = prefix
  slot.lastUsed = performance.now()
  engine.waiting.shift()?.()
}

const grammarOf = (engine: LlamaEngine, schema: Record<string, unknown>): Promise<NodeLlama.LlamaGrammar> => {
  const key = JSON.stringify(schema)
  let grammar = engine.grammars.get(key)
  if (grammar === undefined) {
    // the schema was built for the grammar's subset (llama-grammar.ts); its precise types are not expressible here
    grammar = engine.llama.createGrammarForJsonSchema(schema as never)
    grammar.catch(() => engine.grammars.delete(key))
    if (engine.grammars.size >= 256) engine.grammars.clear()
    engine.grammars.set(key, grammar)
  }
  return grammar
}

/** The tools as the tool-call prompt lists them: one JSON object a line. */
const functionLines = (tools: NonNullable<GenerateRequest["tools"]>): string =>
  tools.map((t) => JSON.stringify({ name: t.name, description: t.description, parameters: t.parameters })).join("\n")

/** A call as the tool-call grammar writes it, for the history of the conversation. */
const callText = (content: string, call: ToolCallRequest): string =>
  JSON.stringify({ thought: content, name: call.name, arguments: call.arguments })

/**
 * Our messages as node-llama-cpp's chat history (its chat wrapper renders them with the model's template): a
 * reflection is a user turn, a tool call is written as the grammar writes it, a tool result is a user turn.
 */
export const toChatHistory = (request: GenerateRequest): Array<NodeLlama.ChatHistoryItem> => {
  const history: Array<NodeLlama.ChatHistoryItem> = []
  const tools = request.tools && request.tools.length > 0 ? request.tools : undefined
  const toolPrompt = tools ? renderTemplate("llama-tool-calls", { functions: functionLines(tools) }).user : undefined
  let toolPromptSent = toolPrompt === undefined
  for (const m of request.messages) {
    switch (m.role) {
      case "system":
        history.push({ type: "system", text: toolPromptSent ? m.content : `${m.content}\n\n${toolPrompt}` })
        toolPromptSent = true
        break
      case "assistant": {
        const calls = m.toolCalls ?? []
        const text = calls.length === 0 ? m.content : calls.map((c) => callText(m.content, c)).join("\n")
        history.push({ type: "model", response: [text] })
        break
      }
      case "tool":
        history.push({
          type: "user",
          text: renderTemplate("llama-tool-result", { tool: m.toolName ?? "the function", result: m.content }).user
        })
        break
      case "reflection":
        history.push({ type: "user", text: m.content })
        break
      default:
        history.push({ type: "user", text: m.content })
    }
  }
  if (!toolPromptSent) history.unshift({ type: "system", text: toolPrompt! })
  history.push({ type: "model", response: [] })
  return history
}

/** What the grammar of a tool-calling reply wrote, as a call; the text is its thought. */
const readToolCall = (text: string, id: string): { text: string; toolCalls?: ReadonlyArray<ToolCallRequest> } => {
  let value: unknown
  try {
    value = parseJsonBounded(text)
  } catch (e) {
    // cut by the token limit mid-object: no call, and the text goes back to the model as its reply
    if (e instanceof NestingTooDeep) return { text }
    return { text }
  }
  if (typeof value !== "object" || value === null || typeof (value as { name?: unknown }).name !== "string")
    return { text }
  const { thought, name, arguments: args } = value as { thought?: unknown; name: string; arguments?: unknown }
  return {
    text: typeof thought === "string" ? thought : "",
    toolCalls: [
      {
        id,
        name,
        arguments:
          typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {}
      }
    ]
  }
}

let calls = 0

/**
 * SMURFS_LLAMA_METER=<file>: each request's prompt and reply tokens and the prompt tokens the engine evaluated, one
 * JSON line per request, for measurements of the KV cache (instruments/perf/llama-tokens.ts); off unless set.
 */
const meterFile = process.env["SMURFS_LLAMA_METER"]?.trim() || undefined

/** What `formatAs: "json_object"` asks of the engine: any JSON object (its members bounded as grammarSchema bounds them). */
const ANY_OBJECT = { type: "object" } as const

/** One request on the engine: a free sequence, the prompt checked against the context, the reply under its limits. */
export const generateOn = async (
  engine: LlamaEngine,
  settings: LlamaSettings,
  request: GenerateRequest,
  signal: AbortSignal,
  task?: ModelTaskKey,
  lane?: number
): Promise<GenerateResponse> => {
  const started = performance.now()
  const prefix = prefixOf(request.messages)
  const slot = await acquireSlot(engine, prefix, signal, task, lane)
  try {
    const history = toChatHistory(request)
    const tools = request.tools && request.tools.length > 0 ? request.tools : undefined
    const schema = tools
      ? toolCallSchema(tools)
      : request.format && request.formatAs !== "none"
        ? grammarSchema(request.formatAs === "json_object" ? ANY_OBJECT : request.format)
        : undefined
    const prompt = slot.chat.chatWrapper
      .generateContextState({ chatHistory: history })
      .contextText.tokenize(engine.model.tokenizer)
    const promptTokens = prompt.length
    const room = engine.contextSize - promptTokens
    if (room <= 0) throw new ContextOverflow({ role: request.role, promptTokens, contextTokens: engine.contextSize })
    const limit = Math.min(
      schema ? schemaTokens(schema) : LLAMA_DEFAULT_MAX_TOKENS,
      request.options?.maxTokens ?? Number.POSITIVE_INFINITY,
      room
    )
    const grammar = schema ? await grammarOf(engine, schema) : undefined
    const meter = slot.sequence.tokenMeter.getState()
    const response = await slot.chat.generateResponse(history, {
      maxTokens: limit,
      temperature: request.options?.temperature ?? settings.temperature,
      seed: request.options?.seed ?? settings.seed,
      signal,
      // Ollama's default: a model in a repetition loop is pushed out of it rather than held to the token limit
      repeatPenalty: REPEAT_PENALTY,
      ...(grammar ? { grammar } : {})
    })
    const used = slot.sequence.tokenMeter.diff(meter)
    engine.meter.evaluated += used.usedInputTokens
    engine.meter.sent += promptTokens
    engine.meter.generated += used.usedOutputTokens
    if (meterFile !== undefined)
      appendFileSync(
        meterFile,
        `${JSON.stringify({
          role: request.role,
          sequence: engine.slots.indexOf(slot),
          startedMs: started,
          endedMs: performance.now(),
          prompt,
          output: slot.sequence.contextTokens.slice(prompt.length),
          evaluated: used.usedInputTokens
        })}\n`
      )
    const thoughts = response.fullResponse
      .filter((r): r is NodeLlama.LlamaChatResponseSegment => typeof r !== "string" && r.segmentType === "thought")
      .map((r) => r.text)
      .join("\n\n")
    const reply = replyWithThinking(response.response, thoughts)
    const called = tools ? readToolCall(reply.text, `call_${++calls}`) : { text: reply.text }
    return {
      text: called.text,
      ...(reply.thinking ? { thinking: reply.thinking } : {}),
      ...(called.toolCalls ? { toolCalls: called.toolCalls } : {}),
      usage: { promptTokens, completionTokens: used.usedOutputTokens },
      model: engine.model.filename ?? engine.path,
      durationMs: Math.round(performance.now() - started)
    } satisfies GenerateResponse
  } finally {
    releaseSlot(engine, slot, prefix)
  }
}

/** What node-llama-cpp threw during a request, as the model layer's error. */
export const requestFailure = (
  e: unknown,
  request: GenerateRequest,
  timeoutMs: number,
  timedOut: boolean,
  path: string
): ProviderError => {
  if (e instanceof ContextOverflow) return e
  if (timedOut) return new Timeout({ ms: timeoutMs, role: request.role })
  return new ModelServerError({ host: `llama.cpp (${path})`, detail: firstLine(e) })
}
