// MatTools' self-reflection agent seen on the Runs page: a run against a scripted local model
// (its first code calls an attribute that does not exist, its second is right) shows both
// rounds, the error of the first and the critique that led to the second.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { startServer, launchBrowser, withScreenshot, repoRoot, fakeProvider } from "../harness.mjs";

const mattools = path.resolve(repoRoot, "..", "shared", "data", "mattools");

const code = (attr) => `<answer><code>\`\`\`python
from pymatgen.core import Structure
from pymatgen.analysis.defects.generators import AntiSiteGenerator

def names():
    s = Structure.from_file("tool_source_code/pymatgen-analysis-defects/tests/test_files/GaN.vasp")
    return {"antisite_defect_names": sorted(d.${attr} for d in AntiSiteGenerator().get_defects(s))}
\`\`\`</code><name>names</name></answer>`;

/** The scripted model: round 1 names a missing attribute, the critic points at it, round 2
 * (whose prompt carries the critique) gets it right. */
function scriptedModel() {
  return fakeProvider(({ messages }) => {
    const last = messages[messages.length - 1].content;
    if (last.startsWith("You review Python code")) {
      return JSON.stringify({ feedback: "Defects have no attribute nmae; use name.", query: "Defect name" });
    }
    return last.includes("Your previous attempt") ? code("name") : code("nmae");
  });
}

let model;
let server;
let browser;
let runId;
before(async () => {
  model = await scriptedModel();
  const base = model.baseUrl;
  server = await startServer({
    env: { ATOMWORLD_MATTOOLS_DIR: mattools, FAKE_API_KEY: "unused" },
    configToml: `[[models]]\nname = "fake"\nprovider = "openai-compatible"\nmodel = "f"\nbase_url = "${base}"\nprice_input_per_mtok = 0.0\nprice_output_per_mtok = 0.0\n`,
  });
  const tasks = await fetch(server.url + "/api/suites/mattools-code/tasks").then((r) => r.json());
  const task = tasks.tasks.find((t) => t.id === "test_antisite_generator").task;
  const created = await fetch(server.url + "/api/runs", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ suite: "mattools-code", model: "fake", agent: "reflect", tasks: [task] }),
  }).then((r) => r.json());
  runId = created.run_id;
  assert.ok(runId, JSON.stringify(created));
  for (let i = 0; i < 1200; i++) {
    const run = await fetch(`${server.url}/api/runs/${runId}`).then((r) => r.json());
    if (run.status === "finished") break;
    await new Promise((r) => setTimeout(r, 100));
  }
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
  await model?.close();
});

test("the Runs page shows an agent's rounds: the failed attempt, the critique, the fix", () =>
  withScreenshot(browser.page, "agent rounds", async () => {
    const page = browser.page;
    await page.goto(`${server.url}/runs?runs=${runId}`);
    await page.waitForSelector("details.rounds", { state: "attached", timeout: 30_000 });
    assert.equal(await page.locator("details.rounds summary").first().textContent(), "2 agent rounds");
    await page.locator("details.rounds summary").first().click();
    const text = await page.locator("details.rounds").first().textContent();
    assert.match(text, /AttributeError/);
    assert.match(text, /use name/);
    assert.match(text, /every property computed/);
  }));
