// What the reference profile sends and reads, as the references' own code does (issue 32 §4-7, §12), read from the
// request bodies a fake OpenAI-compatible server received, with the stand-in Smurfs checkout (our texts, their layout).
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Layer } from "effect"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { runBenchSettings, runConfigOf } from "../bench/app.ts"
import { silentProgress } from "../bench/progress.ts"
import { runReplay } from "../bench/replay.ts"
import { benchSettings } from "../bench/settings.ts"
import { chainProfileOptions, profileNotes, smurfsProfileOptions } from "../src/agents/profile.ts"
import { react } from "../src/agents/react.ts"
import { smurfs } from "../src/agents/smurfs.ts"
import { readSmurfsSource } from "../src/agents/smurfs-source.ts"
import type { Task } from "../src/agents/task.ts"
import { LanguageModel } from "../src/llm/language-model.ts"
import { modelLayer } from "../src/llm/spec.ts"
import { callModel } from "../src/llm/structured.ts"
import { makeEnvironmentChain } from "../src/tools/environments/chain.ts"
import type { ReplayMatch } from "../src/tools/environments/recorded.ts"
import { toolbenchLibrary } from "../src/tools/toolbench/adapter.ts"
import { convertedAnswerOf } from "../src/trace/converters/stabletoolbench.ts"
import { isKind } from "../src/trace/events.ts"
import { ModelCallData } from "../src/trace/record.ts"
import { recording } from "../src/trace/trajectory.ts"
import { MINI_DATA } from "./data.ts"
import { RawJson } from "./fake-servers/core.ts"
import { type FakeOpenAI, type Step, startFakeOpenAI } from "./fake-servers/openai.ts"

const CHECKOUT = fileURLToPath(new URL("./fixtures/smurfs-src", import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), "smurfs-reference-io-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** One ToolBench API: a required STRING, an optional NUMBER (StableToolBench shows both, as `integer`). */
const doc = {
  category_name: "Data",
  tool_name: "Shop Tool",
  api_name: "search",
  api_description: "Search the shop",
  required_parameters: [{ name: "q", type: "STRING", description: "what to look for", default: "lego" }],
  optional_parameters: [{ name: "limit", type: "NUMBER", description: "how many", default: "" }],
  method: "GET"
}
const FUNCTION = "search_for_shop_tool"

/**
 * A StableToolBench cache folder for the API, keyed by `str(tool_input)`: a structured response (non-ASCII text, a
 * float written 10.0) under a float key, and a text response under `{'q': 'lego', 'limit': 5}`.
 */
const cacheDir = (() => {
  const dir = join(scratch, "tool_response_cache")
  mkdirSync(join(dir, "Data", "shop_tool_for_Data"), { recursive: true })
  writeFileSync(
    join(dir, "Data", "shop_tool_for_Data", "search.json"),
    `{"{'q': 'lego', 'limit': 10.0}": {"error": "", "response": {"name": "Caf\u00e9 \u{1F600}", "price": 10.0, "tags": ["a"]}},
      "{'q': 'lego', 'limit': 5}": {"error": "", "response": "five sets"}}`
  )
  return dir
})()

let server: FakeOpenAI | undefined
const saved = process.env["OPENAI_BASE_URL"]
const serve = async (chat: (body: any, index: number) => Step) => {
  server = await startFakeOpenAI({ chat })
  process.env["OPENAI_BASE_URL"] = server.baseURL
}
afterEach(async () => {
  if (saved === undefined) delete process.env["OPENAI_BASE_URL"]
  else process.env["OPENAI_BASE_URL"] = saved
  await server?.close()
})

const layer = () => modelLayer("openai:qwen2.5:7b", { supportsTools: true })

/** The shop task, its API served by replay of the cache folder (then offline: a miss fails). */
const shopTask = (match: ReplayMatch) =>
  Effect.gen(function* () {
    const env = yield* makeEnvironmentChain(["replay", "offline"], { cacheDir, replayMatch: match })
    return {
      id: "shop",
      query: "Find lego sets",
      tools: toolbenchLibrary("shop", [doc], env, { maxObservationChars: Number.POSITIVE_INFINITY })
    } satisfies Task
  })

/** ReAct over the fake server (its script says what the model replies), under a profile. */
const runReact = (profile: "reference" | "improved") =>
  Effect.runPromise(
    Effect.gen(function* () {
      const task = yield* shopTask(profile === "reference" ? "exact" : "lenient")
      return yield* react({ ...chainProfileOptions(profile), toolCalling: "native" })(task)
    }).pipe(Effect.provide(layer()))
  ).then((trajectory) => ({ trajectory, bodies: server!.chatRequests() }))

/** The model's replies: the API called with `args` (the text as written), then Finish with `finish`. */
const calls =
  (args: string, finish: string) =>
  (_body: unknown, index: number): Step =>
    index === 0
      ? { toolCalls: [{ name: FUNCTION, arguments: new RawJson(args) }] }
      : { toolCalls: [{ name: "Finish", arguments: new RawJson(finish) }] }

const GIVE = '{"return_type": "give_answer", "final_answer": "done"}'

describe("ReAct under the reference profile: StableToolBench's request bodies", () => {
  it("sends each function as rapidapi.py writes it, the arguments as the model wrote them, the tool message with its name and the structured response nested as json.dumps writes it", async () => {
    await serve(calls('{"q": "lego", "limit": 10.0}', GIVE))
    const { trajectory, bodies } = await runReact("reference")
    expect(trajectory.finalAnswer).toBe("done")
    const first = bodies[0]
    // §12: NUMBER as integer, required and optional as they write them (a leading ""), no additionalProperties
    expect(first.tools[0].function.parameters).toEqual({
      type: "object",
      properties: {
        q: { type: "string", description: "what to look for", example_value: "lego" },
        limit: { type: "integer", description: "how many" }
      },
      required: ["", "q"],
      optional: ["", "limit"]
    })
    // the baselines' max_tokens 1024 (chatgpt_function_model.py)
    expect(first.max_tokens).toBe(1024)
    const second = bodies[1]
    const assistant = second.messages.find((m: any) => m.role === "assistant")
    // §12: the arguments kept as written (10.0 and the spacing), not re-serialized
    expect(assistant.tool_calls[0].function.arguments).toBe('{"q": "lego", "limit": 10.0}')
    const tool = second.messages.find((m: any) => m.role === "tool")
    expect(tool.name).toBe(FUNCTION)
    // §5 and §7: replayed by its str(tool_input) key with the float as written, the response nested, ASCII-escaped
    expect(tool.content).toBe(
      '{"error": "", "response": {"name": "Caf\\u00e9 \\ud83d\\ude00", "price": 10.0, "tags": ["a"]}}'
    )
    // the converted answer carries the same text
    const converted = convertedAnswerOf(trajectory)
    const nodes: Array<{ role: string; message: any }> = []
    for (let n = converted.answer_details[0]; n; n = n.next[0]) nodes.push(n)
    expect(nodes.find((n) => n.role === "tool" && n.message.name === FUNCTION)?.message.response).toBe(tool.content)
  })

  it("improved is unchanged: our schema, arguments re-serialized, no name, the response a string inside the JSON, lenient replay", async () => {
    await serve(calls('{"q": "lego", "limit": 10.0}', GIVE))
    const { bodies } = await runReact("improved")
    expect(bodies[0].tools[0].function.parameters).toMatchObject({ required: ["q"], additionalProperties: {} })
    expect(bodies[0].tools[0].function.parameters.properties.limit.type).toBe("number")
    const second = bodies[1]
    expect(second.messages.find((m: any) => m.role === "assistant").tool_calls[0].function.arguments).toBe(
      '{"q":"lego","limit":10}'
    )
    const tool = second.messages.find((m: any) => m.role === "tool")
    expect("name" in tool).toBe(false)
    expect(tool.content).toBe(
      '{"error": "", "response": "{\\"name\\":\\"Café 😀\\",\\"price\\":10,\\"tags\\":[\\"a\\"]}"}'
    )
  })

  it('§7: replay keys exactly as their server: another key order, 5 against "5" or 10 against 10.0 is a miss under reference, a hit under improved', async () => {
    const served = async (profile: "reference" | "improved", args: string) => {
      await server?.close()
      await serve(calls(args, GIVE))
      const { trajectory } = await runReact(profile)
      const call = trajectory.events.find((e) => isKind(e, "tool_call"))!
      return `${String(call.data["served"])}${call.data["match"] === undefined ? "" : `:${String(call.data["match"])}`}`
    }
    expect(await served("reference", '{"q": "lego", "limit": 5}')).toBe("replayed:exact")
    expect(await served("reference", '{"limit": 5, "q": "lego"}')).toBe("missed")
    expect(await served("reference", '{"q": "lego", "limit": "5"}')).toBe("missed")
    expect(await served("reference", '{"q": "lego", "limit": 10}')).toBe("missed")
    expect(await served("improved", '{"limit": 5, "q": "lego"}')).toBe("replayed:exact")
    expect(await served("improved", '{"q": "lego", "limit": "5"}')).toBe("replayed:exact")
    expect(await served("improved", '{"q": "lego", "limit": 10}')).toBe("replayed:exact")
  })

  it("§6: a Finish whose arguments are not strict JSON is salvaged as StableToolBench does; improved refuses it", async () => {
    const answerOf = async (profile: "reference" | "improved", finish: string) => {
      await server?.close()
      await serve(calls('{"q": "lego", "limit": 5}', finish))
      const { trajectory, bodies } = await runReact(profile)
      return { answer: trajectory.finalAnswer, bodies }
    }
    // a raw line break inside the string: json.loads(strict=False) reads it
    expect((await answerOf("reference", '{"return_type": "give_answer", "final_answer": "two\nlines"}')).answer).toBe(
      "two\nlines"
    )
    // not JSON at all: their substring fallback, the answer running to the end of the text
    expect(
      (await answerOf("reference", '{"return_type": "give_answer", "final_answer": "a "quoted" word"}')).answer
    ).toBe('a "quoted" word"}')
    // improved: the reply is an error the model is told of (here it never finishes: no answer)
    expect((await answerOf("improved", '{"return_type": "give_answer", "final_answer": "two\nlines"}')).answer).toBe("")
  })

  it("§6: any other call whose arguments are not strict JSON fails as their server's json.loads refuses it; the tool is not called", async () => {
    await serve(calls('{"q": "le\ngo"}', GIVE))
    const { trajectory, bodies } = await runReact("reference")
    expect(trajectory.events.filter((e) => isKind(e, "tool_call"))).toHaveLength(0)
    const tool = bodies[1].messages.find((m: any) => m.role === "tool")
    expect(JSON.parse(tool.content).error).toMatch(/cannot read the arguments as JSON/)
  })
})

describe("Smurfs under the reference profile: their vLLM client's system message and json.dumps observations", () => {
  const task = (match: ReplayMatch) =>
    Effect.map(shopTask(match), (t) => ({ ...t, query: "Find lego sets" }) satisfies Task)

  /** Smurfs over the fake server: one subtask, the API called with `{'q': 'lego', 'limit': 10.0}`. */
  const runSmurfs = (checkout: string) =>
    Effect.runPromise(
      Effect.gen(function* () {
        const t = yield* task("exact")
        return yield* smurfs({ reportUnavailable: false, ...smurfsProfileOptions("reference", checkout) })(t)
      }).pipe(Effect.provide(layer()))
    )

  const replies = (body: any): Step => {
    const prompt: string = body.messages.at(-1).content
    if (prompt.includes("STAND-IN PLANNER")) return { content: '{"Tasks": ["Find lego sets"]}' }
    if (prompt.includes("Tools:") && prompt.includes("Hint:")) return { content: "Use the shop." }
    if (prompt.includes("Doc:")) return { content: "{'q': 'lego', 'limit': 10.0}" }
    if (prompt.includes("Question:") && prompt.includes("thought:")) return { content: '{"ID": 0, "Reason": "r"}' }
    if (prompt.includes("Response:")) return { content: "A café set." }
    if (prompt.includes("Answer:")) return { content: '{"Speak": "ok", "Status": "1"}' }
    return { content: "A café set for 10." }
  }

  it("§4: sends the checkout's system text before every prompt; §5/§7: the observation is json.dumps of the structured response, replayed by the float key as eval read it", async () => {
    await serve(replies)
    const trajectory = await runSmurfs(CHECKOUT)
    const bodies = server!.chatRequests()
    expect(bodies.length).toBeGreaterThan(4)
    for (const body of bodies)
      expect(body.messages[0]).toEqual({
        role: "system",
        content: "STAND-IN system text: you are a test agent with tools."
      })
    const call = trajectory.events.find((e) => isKind(e, "tool_call"))!
    expect(call.data["served"]).toBe("replayed")
    expect(call.data["match"]).toBe("exact")
    const step = bodies.find((b) => b.messages.at(-1).content.includes("Response:"))
    expect(step.messages.at(-1).content).toContain(
      `'observation': '{"error": "", "response": {"name": "Caf\\\\u00e9 \\\\ud83d\\\\ude00", "price": 10.0, "tags": ["a"]}}'`
    )
    expect(profileNotes("reference", ["smurfs"], CHECKOUT)).toEqual([])
  })

  it("§4: a checkout without Smurfs/model/base.py runs without a system message, and the run says so", async () => {
    const bare = join(scratch, "smurfs-src-without-model")
    cpSync(CHECKOUT, bare, { recursive: true })
    rmSync(join(bare, "Smurfs", "model"), { recursive: true, force: true })
    expect(readSmurfsSource(bare).system).toBeUndefined()
    expect(profileNotes("reference", ["smurfs"], bare)).toEqual([
      expect.stringMatching(/Smurfs\/model\/base\.py[\s\S]*without a system message/)
    ])
    expect(profileNotes("reference", ["react"], bare)).toEqual([])
    expect(profileNotes("improved", ["smurfs"], bare)).toEqual([])
    await serve(replies)
    await runSmurfs(bare)
    expect(server!.chatRequests().every((b) => b.messages[0].role === "user")).toBe(true)
  })
})

describe("the arguments' text as the model wrote it", () => {
  it("is recorded with the reply (a verified replay sends it back as the run did) and redacted like the arguments", async () => {
    const { value, events } = await Effect.runPromise(
      recording(
        "t",
        callModel(
          () =>
            Effect.succeed({
              text: "",
              toolCalls: [
                {
                  name: FUNCTION,
                  arguments: { q: "sk-proj-abcdefghijklmnop", limit: 10 },
                  rawArguments: '{"q": "sk-proj-abcdefghijklmnop", "limit": 10.0}'
                }
              ],
              usage: { promptTokens: 1, completionTokens: 1 },
              model: "m",
              durationMs: 0
            }),
          { role: "react.step", messages: [{ role: "user", content: "go" }] }
        )
      )
    )
    expect(value.toolCalls?.[0]?.rawArguments).toBe('{"q": "[REDACTED]", "limit": 10.0}')
    const call = events.find((e) => isKind(e, "model_call"))!
    expect(ModelCallData.parse(call.data).toolCalls?.[0]?.rawArguments).toBe('{"q": "[REDACTED]", "limit": 10.0}')
  })
})

describe("a bench run under reference", () => {
  it("gives ReAct StableToolBench's function schemas and exact replay (run.json), over the sample data", async () => {
    await serve(() => ({
      toolCalls: [{ name: "Finish", arguments: new RawJson('{"return_type": "give_up_and_restart"}') }]
    }))
    const out = join(scratch, "bench-reference")
    const settings = benchSettings({
      out,
      data: MINI_DATA.path,
      model: "openai:qwen2.5:7b",
      groups: ["G1_instruction"],
      limit: 1,
      methods: ["react"],
      toolCalling: "native",
      profile: "reference"
    })
    expect((await Effect.runPromise(runBenchSettings(settings, silentProgress))).kind).toBe("ran")
    const body = server!.chatRequests()[0]
    const functions = body.tools.map((t: any) => t.function)
    expect(functions.length).toBeGreaterThan(1)
    for (const f of functions.filter((f: any) => f.name !== "Finish")) {
      expect(f.parameters.required[0]).toBe("")
      expect(f.parameters.optional[0]).toBe("")
      expect("additionalProperties" in f.parameters).toBe(false)
      expect(JSON.stringify(f.parameters)).not.toContain('"type":"number"')
    }
    expect(body.max_tokens).toBe(1024)
    const config = JSON.parse(readFileSync(join(out, "run.json"), "utf8")) as { options: Record<string, any> }
    expect(config.options["replayMatch"]).toBe("exact")
  })
})

describe("a verified replay of a reference run", () => {
  it("sends the arguments' text back as the run did: every trajectory identical, no model call", async () => {
    await serve((body: any, index: number) =>
      index % 2 === 0
        ? { toolCalls: [{ name: body.tools[0].function.name, arguments: new RawJson('{"x": 10.0,  "y": "\u00e9"}') }] }
        : {
            toolCalls: [
              { name: "Finish", arguments: new RawJson('{"return_type": "give_answer", "final_answer": "ok"}') }
            ]
          }
    )
    const source = join(scratch, "replay-source")
    const run = benchSettings({
      out: source,
      data: MINI_DATA.path,
      model: "openai:qwen2.5:7b",
      groups: ["G1_instruction"],
      limit: 1,
      methods: ["react"],
      toolCalling: "native",
      profile: "reference"
    })
    expect((await Effect.runPromise(runBenchSettings(run, silentProgress))).kind).toBe("ran")
    const sent = server!.chatRequests()[1].messages.find((m: any) => m.role === "assistant")
    expect(sent.tool_calls[0].function.arguments).toBe('{"x": 10.0,  "y": "\u00e9"}')
    const noModel = Layer.succeed(
      LanguageModel,
      LanguageModel.of({
        info: { spec: "none", provider: "none", model: "none", contextTokens: 8192, supportsTools: true },
        generate: () => Effect.die("a replay called the model")
      })
    )
    const { report } = await Effect.runPromise(
      runReplay(benchSettings({ out: join(scratch, "replayed"), replayFrom: source }), silentProgress, noModel)
    )
    expect(report).toMatchObject({ checked: 1, identical: 1, divergences: [] })
  })
})

describe("run.json of a reference run", () => {
  it("records exact replay and StableToolBench's I/O for the chains; improved records lenient replay and no new field", () => {
    const config = (profile: "reference" | "improved") =>
      runConfigOf(
        benchSettings({ out: join(scratch, profile), data: MINI_DATA.path, model: "openai:qwen2.5:7b", profile }),
        [],
        "qwen2.5:7b",
        undefined
      ).options as { replayMatch: string; profile: { chain: Record<string, unknown> } }
    expect(config("reference").replayMatch).toBe("exact")
    expect(config("reference").profile.chain["asStableToolBench"]).toBe(true)
    expect(config("improved").replayMatch).toBe("lenient")
    expect("asStableToolBench" in config("improved").profile.chain).toBe(false)
  })
})
