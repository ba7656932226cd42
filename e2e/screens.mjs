// Screenshots of every suite's pages as a person sees them, for reviews and closing notes:
// /suites with each suite chosen and an answer scored, /human on an AlchemyBench run judged by
// a local fake judge, and /runs showing the papers' tables of finished runs, at a desktop and
// a phone width. Not a test: it asserts nothing and writes PNGs to e2e/artifacts/screens/.
//   ATOMWORLD_BIN=… node e2e/screens.mjs     (scripts/screens.sh builds and sets everything)
import { mkdirSync } from "node:fs";
import path from "node:path";
import { startServer, launchBrowser, fakeProvider, artifactsDir, repoRoot } from "./harness.mjs";

const out = path.join(artifactsDir, "screens");
mkdirSync(out, { recursive: true });
const WIDTHS = [[1280, 800], [390, 844]];
const mattools = path.resolve(repoRoot, "..", "shared", "data", "mattools");

/** A judge whose every criterion is 3.5, and an answer model that always says the same. */
const judge = await fakeProvider((body) => {
  const text = JSON.stringify(body);
  if (text.includes("materials_appropriateness_score")) {
    const keys = ["materials_appropriateness_score", "equipment_appropriateness_score",
      "procedure_completeness_score", "procedure_similarity_score", "procedure_feasibility_score",
      "characterization_appropriateness_score", "characterization_similarity_score", "overall_score"];
    return "```json\n" + JSON.stringify(Object.fromEntries(keys.map((k) => [k, 3.5]))) + "\n```";
  }
  return "```json\n{\"precision\": 0.5, \"recall\": 0.5, \"met\": 1, \"quality_score\": 0.5, \"reasoning\": \"partly\"}\n```";
});
const server = await startServer({
  configToml: `[[models]]\nname = "judge"\nprovider = "openai-compatible"\nmodel = "j"\nbase_url = "${judge.baseUrl}"\nprice_input_per_mtok = 0.0\nprice_output_per_mtok = 0.0\n\n[limits]\njudge_model = "judge"\n`,
  env: { ATOMWORLD_MATTOOLS_DIR: mattools },
});
const browser = await launchBrowser();
const page = browser.page;

const post = (body) => fetch(server.url + "/api/runs", {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
}).then((r) => r.json());
const finished = async (id) => {
  for (let i = 0; i < 600; i++) {
    const run = await fetch(`${server.url}/api/runs/${id}`).then((r) => r.json());
    if (run.status !== "running" && run.status !== "pending") return;
    await new Promise((r) => setTimeout(r, 200));
  }
};
const runs = [];
for (const [suite, model] of [["alchemy", "reference"], ["omnimat-cal", "reference"],
  ["omnimat-qa", "reference"], ["mattools-qa", "reference"], ["mattools-code", "empty"],
  ["atomworld", "reference"]]) {
  const created = await post({ suite, model });
  if (created.run_id) runs.push([suite, created.run_id]);
  else console.error(`${suite}: ${JSON.stringify(created)}`);
}
for (const [, id] of runs) await finished(id);

const shot = async (name, width) => {
  const file = path.join(out, `${name}-${width}.png`);
  await page.screenshot({ path: file, fullPage: true });
  console.log(file);
};

for (const [width, height] of WIDTHS) {
  await page.setViewportSize({ width, height });
  await page.goto(server.url + "/suites");
  await page.waitForSelector("#suite-select option", { state: "attached" });
  const suites = await page.$$eval("#suite-select option", (os) => os.map((o) => o.value).filter(Boolean));
  for (const suite of suites) {
    await page.selectOption("#suite-select", suite);
    await page.waitForFunction(() => document.querySelectorAll("#suite-task option").length > 1, null, { timeout: 30_000 }).catch(() => {});
    if (suite !== "mattools-code") {
      await page.fill("#suite-answer", "<answer>B</answer>").catch(() => {});
      await page.click("#suite-score").catch(() => {});
      await page.waitForSelector("#suite-label, #suite-error", { timeout: 60_000 }).catch(() => {});
    }
    await shot(`suites-${suite}`, width);
  }
  const alchemy = runs.find(([s]) => s === "alchemy");
  if (alchemy) {
    await page.goto(`${server.url}/human?run=${alchemy[1]}`);
    await page.waitForSelector("#human-table select.mine", { state: "attached", timeout: 30_000 }).catch(() => {});
    await shot("human", width);
  }
  for (const [suite, id] of runs) {
    await page.goto(`${server.url}/runs?runs=${id}`);
    await page.waitForSelector("#paper-tables figure, #runs-error", { timeout: 60_000 }).catch(() => {});
    await shot(`runs-${suite}`, width);
  }
}

await browser.close();
await server.stop();
await judge.close();
