// Node side of the matcher speed benchmark (scripts/bench-matcher.sh runs it).
//
//   node bench.mjs PAIRS.json --ours PKG_DIR [--repeat N] [--out-dir DIR]
//
// Times, on the same (target, prediction) CIF pairs, (1) our engine compiled to wasm32 and
// bound by wasm-bindgen (`--target nodejs` output in PKG_DIR, function `evaluate`) and (2) the
// npm package matterviz-wasm (ferrox) driven the same way: parse both CIFs, compare element
// counts, fit with primitive_cell=false / stol 0.5 / ltol 0.2 / angle_tol 5, then get_rms_dist
// on a fit. One untimed warm-up pass, then N timed passes; prints one JSON line per
// implementation and writes the verdicts (JSON lines) to DIR/verdicts-<impl>.jsonl.
import { readFileSync, writeFileSync, existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'

const here = dirname(fileURLToPath(import.meta.url))
const args = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : dflt
}
const pairsPath = args[0]
const oursDir = opt('--ours')
const repeat = Math.max(1, Number(opt('--repeat', '3')))
const outDir = opt('--out-dir', '.')
if (!pairsPath || !oursDir) {
  console.error('usage: node bench.mjs PAIRS.json --ours PKG_DIR [--repeat N] [--out-dir DIR]')
  process.exit(2)
}
const pairs = JSON.parse(readFileSync(pairsPath, 'utf8')).pairs

function time(name, evaluate) {
  const verdicts = pairs.map((p) => evaluate(p.target, p.prediction))
  const times = []
  for (let r = 0; r < repeat; r++) {
    const start = performance.now()
    for (const p of pairs) evaluate(p.target, p.prediction)
    times.push((performance.now() - start) / 1000)
  }
  times.sort((a, b) => a - b)
  writeFileSync(join(outDir, `verdicts-${name}.jsonl`), verdicts.map((v) => JSON.stringify(v)).join('\n') + '\n')
  console.log(JSON.stringify({
    impl: name, pairs: pairs.length, passes: times.length,
    best_seconds: times[0], median_seconds: times[Math.floor(times.length / 2)],
  }))
}

// (1) Our engine in wasm.
const require = createRequire(import.meta.url)
const ours = require(join(oursDir, 'engine_bench.js'))
time('wasm', (t, p) => JSON.parse(ours.evaluate(t, p)))

// (2) matterviz-wasm, when installed.
const mvWasm = join(here, 'node_modules', 'matterviz-wasm', 'pkg', 'ferrox_bg.wasm')
if (!existsSync(mvWasm)) {
  console.log(JSON.stringify({ impl: 'matterviz-wasm', skipped: 'not installed (npm ci in engine-bench/node)' }))
} else {
  const init = (await import('matterviz-wasm')).default
  const mv = await init({ module_or_path: readFileSync(mvWasm) })
  const matcher = new mv.WasmStructureMatcher()
    .with_latt_len_tol(0.2)
    .with_site_pos_tol(0.5)
    .with_angle_tol(5.0)
    .with_primitive_cell(false)
    .with_scale(true)
    .with_attempt_supercell(false)
  const counts = (s) => {
    const c = new Map()
    for (const site of s.sites) {
      for (const sp of site.species) c.set(sp.element, (c.get(sp.element) ?? 0) + sp.occu)
    }
    return c
  }
  const sameCounts = (a, b) => {
    const [ca, cb] = [counts(a), counts(b)]
    if (ca.size !== cb.size) return false
    for (const [k, v] of ca) if (Math.abs((cb.get(k) ?? 0) - v) >= 1e-8) return false
    return true
  }
  time('matterviz-wasm', (t, p) => {
    const a = mv.parse_cif(t)
    const b = mv.parse_cif(p)
    if (!a || !('ok' in a) || !b || !('ok' in b)) return { verdict: 'CifParsingError' }
    if (a.ok.sites.length === 0 || b.ok.sites.length === 0) return { verdict: 'CifParsingError' }
    if (!sameCounts(a.ok, b.ok)) return { verdict: 'AtomCountMismatch' }
    const f = matcher.fit(a.ok, b.ok)
    if (!('ok' in f) || !f.ok) return { verdict: 'StructureMismatch' }
    const r = matcher.get_rms_dist(a.ok, b.ok)
    if (!('ok' in r) || r.ok == null) return { verdict: 'StructureMismatch' }
    return { verdict: 'Success', rms: r.ok.rms, max_dist: r.ok.max_dist }
  })
}
