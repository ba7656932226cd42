// The benchmark's module worker: evaluates every pair once to warm up, then times `passes`
// passes and posts the seconds of each.
import init, { evaluate } from "./pkg/engine_bench.js";

onmessage = async (e) => {
  await init();
  const pairs = (await (await fetch("./pairs.json")).json()).pairs;
  for (const p of pairs) evaluate(p.target, p.prediction);
  const seconds = [];
  for (let r = 0; r < e.data.passes; r++) {
    const t = performance.now();
    for (const p of pairs) evaluate(p.target, p.prediction);
    seconds.push((performance.now() - t) / 1000);
  }
  postMessage({ pairs: pairs.length, seconds });
};
