// Checks `jsonDumps` against CPython's `json.dumps` on a generated corpus, and writes the unit test's fixture.
//
//   node scripts/json-dumps-corpus.ts [--count 20000] [--seed 1] [--write-fixture [--fixture-count 800]]
//
// python3 makes the values (every control character, DEL, lone surrogates, astral characters, floats of every
// kind, ints past 2^64, nested dicts with their key order) and dumps each with several option sets; this script
// dumps the same values with `jsonDumps` and compares the texts (equal strings: equal UTF-8 bytes). The values
// travel as a tagged JSON (ints as digits, floats as repr, dicts as lists of pairs), so no int/float or key
// order is lost on the way. `--write-fixture` stores the first values with CPython's texts in
// test/fixtures/json-dumps/cpython.jsonl, which src/tools/environments/json-dumps.test.ts reads without python.
import { spawnSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { compareWithCPython, JSON_DUMPS_OPTION_SETS, type JsonDumpsCorpusCase } from "../test/json-dumps-corpus.ts"

const GENERATOR = String.raw`
import json, math, random, struct, sys
seed, count = int(sys.argv[1]), int(sys.argv[2])
option_sets = json.loads(sys.argv[3])
rng = random.Random(seed)

def tag(v):
    if v is None: return ["n"]
    if isinstance(v, bool): return ["b", v]
    if isinstance(v, int): return ["i", str(v)]
    if isinstance(v, float):
        return ["f", "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity") if math.isinf(v) else repr(v)]
    if isinstance(v, str): return ["s", v]
    if isinstance(v, list): return ["l", [tag(x) for x in v]]
    return ["d", [[k, tag(x)] for k, x in v.items()]]

POOLS = [
    lambda: chr(rng.randint(0x20, 0x7e)),
    lambda: chr(rng.randint(0, 0x1f)),
    lambda: "\x7f",
    lambda: chr(rng.randint(0x80, 0xff)),
    lambda: chr(rng.randint(0x100, 0xd7ff)),
    lambda: chr(rng.randint(0xd800, 0xdfff)),
    lambda: chr(rng.randint(0xe000, 0xffff)),
    lambda: chr(rng.randint(0x10000, 0x10ffff)),
    lambda: rng.choice(['"', "\\", "/", "\u2028", "\u2029", "\ufeff", "\ufffd", "\U0001f600"]),
]

# a JavaScript string cannot hold a surrogate pair as two code points: such a pair is made the character it encodes
def paired(s):
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")

def string(n=None):
    n = rng.randint(0, 12) if n is None else n
    return paired("".join(rng.choice(POOLS)() if rng.random() < 0.6 else chr(rng.randint(0x61, 0x7a)) for _ in range(n)))

def floating():
    k = rng.randint(0, 7)
    if k == 0: return struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
    if k == 1: return float(rng.randint(-10**18, 10**18)) / (10 ** rng.randint(0, 20))
    if k == 2: return float(rng.randint(-10**6, 10**6))
    if k == 3: return rng.choice([0.0, -0.0, math.inf, -math.inf, math.nan, 1e16, 1e15, 9999999999999998.0,
                                   1e-4, 1e-5, 5e-324, 1.7976931348623157e308, 2.0**53, 2.0**53 + 2, 1e22, 1e21,
                                   0.1, 0.30000000000000004, 123456789.0, -1e-7, 1.5e300])
    if k == 4: return rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30)
    if k == 5: return round(rng.uniform(-1000, 1000), rng.randint(0, 6))
    if k == 6: return float(rng.randint(1, 9)) * 10.0 ** rng.randint(-25, 25)
    return rng.random()

def integer():
    k = rng.randint(0, 3)
    if k == 0: return rng.randint(-1000, 1000)
    if k == 1: return rng.randint(-2**53, 2**53)
    if k == 2: return rng.choice([0, -1, 2**53 + 1, 2**63, 2**64, -2**70, 10**16, 10**30, 9999999999999999])
    return rng.randint(-10**40, 10**40)

def key():
    k = rng.randint(0, 5)
    if k == 0: return str(rng.randint(0, 99))  # integer-like: JavaScript's objects move these first
    if k == 1: return rng.choice(["a", "b", "B", "_", "aa", "", "__proto__", "é", "\U0001f600", "\uff21", "\x7f", "\ud800"])
    return string(rng.randint(0, 6))

def value(depth=0):
    k = rng.randint(0, 9 if depth < 3 else 5)
    if k == 0: return rng.choice([None, True, False])
    if k in (1, 2): return floating()
    if k == 3: return integer()
    if k in (4, 5): return string()
    if k in (6, 7): return [value(depth + 1) for _ in range(rng.randint(0, 4))]
    return {key(): value(depth + 1) for _ in range(rng.randint(0, 4))}

# first the fixed cases: every code unit up to 0x100 and the surrogates' edges alone, then random values
fixed = [chr(c) for c in range(0x101)] + ["\ud800", "\udbff", "\udc00", "\udfff", "\U0010ffff", "\U00010000"]
values = fixed + [value() for _ in range(max(0, count - len(fixed)))]
for v in values[:count]:
    out = {}
    for name, kw in option_sets.items():
        if "separators" in kw: kw = dict(kw, separators=tuple(kw["separators"]))
        out[name] = json.dumps(v, **kw)
    sys.stdout.write(json.dumps({"input": tag(v), "outputs": out}) + "\n")
`

const arg = (name: string, fallback: number): number => {
  const at = process.argv.indexOf(name)
  return at < 0 ? fallback : Number(process.argv[at + 1])
}
const count = arg("--count", 20000)
const seed = arg("--seed", 1)
const python = spawnSync(
  "python3",
  ["-c", GENERATOR, String(seed), String(count), JSON.stringify(JSON_DUMPS_OPTION_SETS)],
  {
    encoding: "utf8",
    maxBuffer: 1 << 30
  }
)
if (python.status !== 0) {
  console.error(`python3 failed (is it installed?): ${python.stderr || python.error?.message}`)
  process.exit(1)
}
const cases: Array<JsonDumpsCorpusCase> = python.stdout
  .split("\n")
  .filter((line) => line !== "")
  .map((line) => JSON.parse(line) as JsonDumpsCorpusCase)

const result = compareWithCPython(cases)
console.log(`python3 ${spawnSync("python3", ["--version"], { encoding: "utf8" }).stdout.trim()}, seed ${seed}`)
console.log(`${cases.length} values, ${Object.keys(JSON_DUMPS_OPTION_SETS).length} option sets each`)
for (const [route, r] of Object.entries(result.routes))
  console.log(`  ${route}: ${r.compared} texts compared, ${r.equal} equal, ${r.skipped} values skipped (${r.why})`)
for (const m of result.mismatches.slice(0, 10))
  console.log(
    `MISMATCH ${m.route}/${m.option}\n  input:   ${JSON.stringify(m.input)}\n  cpython: ${m.expected}\n  ours:    ${m.actual}`
  )
if (process.argv.includes("--write-fixture")) {
  const file = join(dirname(fileURLToPath(import.meta.url)), "..", "test", "fixtures", "json-dumps", "cpython.jsonl")
  mkdirSync(dirname(file), { recursive: true })
  const kept = cases.slice(0, arg("--fixture-count", 800))
  writeFileSync(file, `${kept.map((c) => JSON.stringify(c)).join("\n")}\n`)
  console.log(`wrote ${kept.length} values to ${file}`)
}
process.exit(result.mismatches.length === 0 ? 0 : 1)
