// Agents seen on the Runs page. MatTools' self-reflection agent: a run against a scripted
// local model (its first code calls an attribute that does not exist, its second is right)
// shows both rounds, the error of the first and the critique that led to the second.
// AtomWorld's engine-tools agent: a scripted model calling tools (read, apply, write) shows
// each call and what it gave.
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

/** The scripted tool user: one call a turn, by how many results it has seen. */
function toolModel() {
  return fakeProvider(({ messages }) => {
    const seen = messages.filter((m) => m.role === "tool").length;
    const calls = [
      ["read_structure", {}],
      ["apply_action", { action: { action: "change", index: 0, element: "K" } }],
      ["write_cif", {}],
    ];
    const [name, args] = calls[Math.min(seen, 2)];
    return { tool_calls: [{ id: `c${seen}`, type: "function", function: { name, arguments: JSON.stringify(args) } }] };
  });
}

const CSCL = "data_x\n_cell_length_a 4.12\n_cell_length_b 4.12\n_cell_length_c 4.12\n_cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\nloop_\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\nCs 0 0 0\nCl 0.5 0.5 0.5\n";

const modelToml = (name, base) =>
  `[[models]]\nname = "${name}"\nprovider = "openai-compatible"\nmodel = "f"\nbase_url = "${base}"\nprice_input_per_mtok = 0.0\nprice_output_per_mtok = 0.0\n`;

/** Start a run and wait for it to finish; its id. */
async function finishedRun(body) {
  const created = await fetch(server.url + "/api/runs", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  }).then((r) => r.json());
  assert.ok(created.run_id, JSON.stringify(created));
  for (let i = 0; i < 1200; i++) {
    const run = await fetch(`${server.url}/api/runs/${created.run_id}`).then((r) => r.json());
    if (run.status === "finished") break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return created.run_id;
}

let model;
let tools;
let server;
let browser;
let runId;
let toolRunId;
before(async () => {
  model = await scriptedModel();
  tools = await toolModel();
  server = await startServer({
    env: { ATOMWORLD_MATTOOLS_DIR: mattools, FAKE_API_KEY: "unused" },
    configToml: modelToml("fake", model.baseUrl) + modelToml("tool-fake", tools.baseUrl),
  });
  const tasks = await fetch(server.url + "/api/suites/mattools-code/tasks").then((r) => r.json());
  const task = tasks.tasks.find((t) => t.id === "test_antisite_generator").task;
  runId = await finishedRun({ suite: "mattools-code", model: "fake", agent: "reflect", tasks: [task] });
  const action = "Change the atom at index 0 into K in the cif file. The indices of atoms are started from 0.";
  toolRunId = await finishedRun({ model: "tool-fake", agent: "engine-tools", tasks: [{ id: "k", input_cif: CSCL, action_prompt: action }] });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
  await model?.close();
  await tools?.close();
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

test("the Runs page shows each tool call of the engine-tools agent and what it gave", () =>
  withScreenshot(browser.page, "agent tool calls", async () => {
    const page = browser.page;
    await page.goto(`${server.url}/runs?runs=${toolRunId}`);
    await page.waitForSelector("details.rounds", { state: "attached", timeout: 30_000 });
    assert.equal(await page.locator("details.rounds summary").first().textContent(), "3 agent rounds");
    await page.locator("details.rounds summary").first().click();
    const calls = await page.locator("details.rounds .tool-call").allTextContents();
    assert.equal(calls.length, 3, calls.join(" | "));
    assert.match(calls[0], /^call: read_structure\(\{\}\) → \{"angles":\[90/);
    assert.equal(calls[1], 'call: apply_action({"action":{"action":"change","index":0,"element":"K"}}) → done: the working structure has 2 sites');
    assert.equal(calls[2], "call: write_cif({}) → written");
    // The structure it wrote is the answer: scored a success.
    const verdict = await page.locator("#results tbody tr").first().textContent();
    assert.match(verdict, /Success/);
  }));
