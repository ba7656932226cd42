// Serves the worker page, the wasm bench (OUT/pkg) and the pairs (OUT/pairs.json) on
// 127.0.0.1, opens the page in headless chromium and prints the worker's timings.
//   node engine-bench/browser/bench.mjs OUT PASSES
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "../../e2e/node_modules/playwright-core/index.mjs";

const [out, passes = "5"] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const types = { ".html": "text/html", ".js": "text/javascript", ".json": "application/json", ".wasm": "application/wasm" };
// The page's two files from here, everything else (pkg/, pairs.json) from OUT.
const server = createServer(async (req, res) => {
  const name = decodeURIComponent(new URL(req.url, "http://x").pathname).replace(/^\/+/, "");
  if (name.split("/").includes("..")) return res.writeHead(404).end();
  const file = ["", "index.html", "worker.js"].includes(name)
    ? path.join(here, name || "index.html")
    : path.join(out, path.normalize(name));
  try {
    const body = await readFile(file);
    res.writeHead(200, { "content-type": types[path.extname(file)] ?? "application/octet-stream" });
    res.end(body);
  } catch {
    res.writeHead(404).end();
  }
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox"],
});
try {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/?passes=${passes}`);
  await page.waitForFunction(() => window.benchResult, null, { timeout: 30 * 60_000 });
  const { pairs, seconds } = await page.evaluate(() => window.benchResult);
  const sorted = [...seconds].sort((a, b) => a - b);
  const f = (s) => `${s.toFixed(3)} s`;
  console.log(
    `chromium module worker: ${pairs} evaluations, best ${f(sorted[0])}, ` +
      `median ${f(sorted[Math.floor(sorted.length / 2)])} (passes: ${seconds.map(f).join(", ")})`,
  );
} finally {
  await browser.close();
  server.close();
}
