// The suites page against the real server and its bwrap sandbox: a MatTools code task is
// answered with working code (Success, each property shown) and with broken code (the
// error class of the paper's taxonomy); an OmniMatBench calculation scores a pasted answer.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { startServer, launchBrowser, withScreenshot, repoRoot } from "../harness.mjs";

const mattools = path.resolve(repoRoot, "..", "shared", "data", "mattools");

let server;
let browser;
before(async () => {
  server = await startServer({ env: { ATOMWORLD_MATTOOLS_DIR: mattools } });
  browser = await launchBrowser();
  await browser.page.goto(server.url + "/suites");
  await browser.page.waitForSelector("#suite-select option[value=mattools-code]", { state: "attached" });
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

const check = (name, fn) => withScreenshot(browser.page, name, fn);

test("the server is the shipped build: its embedded Python sandbox runs", () =>
  check("suites health", async () => {
    // The server checks (and on a first start compiles) the interpreter in the background.
    const health = await browser.page.evaluate(async () => {
      for (let i = 0; i < 240; i++) {
        const h = await (await fetch("/api/health")).json();
        if (h.sandbox?.available) return h;
        await new Promise((r) => setTimeout(r, 500));
      }
      return (await fetch("/api/health")).json();
    });
    assert.equal(health.sandbox?.backend, "wasm", JSON.stringify(health));
    assert.equal(health.sandbox?.available, true, JSON.stringify(health));
  }));

const working = `<answer><code>\`\`\`python
from pymatgen.core import Structure
from pymatgen.analysis.defects.generators import AntiSiteGenerator

def names():
    s = Structure.from_file("tool_source_code/pymatgen-analysis-defects/tests/test_files/GaN.vasp")
    return {"antisite_defect_names": sorted(d.name for d in AntiSiteGenerator().get_defects(s))}
\`\`\`</code><name>names</name></answer>`;

test("MatTools: working code succeeds in the sandbox; a hallucinated attribute is named as such", () =>
  check("suites mattools", async () => {
    const page = browser.page;
    await page.selectOption("#suite-select", "mattools-code");
    await page.waitForSelector("#suite-task option[value=test_antisite_generator]", { state: "attached" });
    await page.selectOption("#suite-task", "test_antisite_generator");
    assert.match(await page.locator("#suite-prompt").textContent(), /antisite_defect_names/);
    await page.fill("#suite-answer", working);
    // The code is coloured as Python under the text.
    const keywords = await page.locator("#suite-answer-highlight .kw").allTextContents();
    assert.ok(["from", "import", "def", "return", "for", "in"].every((k) => keywords.includes(k)), keywords.join(" "));
    assert.ok((await page.locator("#suite-answer-highlight .str").count()) >= 1);
    assert.equal(await page.locator("#suite-answer-highlight").textContent(), working + "\n");
    await page.click("#suite-score");
    await page.waitForSelector("#suite-label", { timeout: 120_000 });
    assert.equal(await page.locator("#suite-label").textContent(), "Success");
    assert.match(await page.locator("#suite-table").textContent(), /Ga_N/);
    await page.fill("#suite-answer", working.replace("d.name", "d.nmae"));
    await page.click("#suite-score");
    await page.waitForFunction(() => document.querySelector("#suite-label")?.textContent === "FunctionError", null, { timeout: 120_000 });
    assert.equal(await page.locator("#suite-tags .tag").textContent(), "API Hallucination");
  }));

test("MatTools: code that runs long shows its elapsed time and can be cancelled, which frees the server's slot", () =>
  check("suites cancel", async () => {
    const page = browser.page;
    await page.selectOption("#suite-select", "mattools-code");
    await page.waitForSelector("#suite-task option[value=test_antisite_generator]", { state: "attached" });
    await page.selectOption("#suite-task", "test_antisite_generator");
    const loop = working.replace("def names():", "def names():\n    while True:\n        pass");
    await page.fill("#suite-answer", loop);
    await page.click("#suite-score");
    // The seconds count up while the server works.
    await page.waitForFunction(() => /^[2-9] s/.test(document.querySelector("#suite-elapsed")?.textContent ?? ""), null, { timeout: 15_000 });
    assert.match(await page.locator("#suite-elapsed").textContent(), /the code runs in the server's sandbox/);
    await page.click("#suite-cancel");
    await page.locator("#suite-error").waitFor();
    assert.match(await page.locator("#suite-error").textContent(), /^Cancelled after \d+ s/);
    assert.equal(await page.locator("#suite-elapsed").count(), 0);
    assert.equal(await page.locator("#suite-score").textContent(), "Score");
    // The server let go of the cancelled scoring (the loop would hold it for minutes): an
    // address may have five in progress, and five at once are all taken again.
    const statuses = await page.evaluate(async () => {
      const tasks = await (await fetch("/api/suites/mattools-qa/tasks")).json();
      const body = JSON.stringify({ suite: "mattools-qa", task: tasks.tasks[0].task, response: "<answer>A</answer>" });
      for (let attempt = 0; attempt < 40; attempt++) {
        const codes = await Promise.all(
          Array.from({ length: 5 }, () => fetch("/api/score", { method: "POST", headers: { "content-type": "application/json" }, body }).then((r) => r.status)),
        );
        if (codes.every((c) => c === 200)) return codes;
        await new Promise((r) => setTimeout(r, 250));
      }
      return "still busy after 10 s";
    });
    assert.deepEqual(statuses, [200, 200, 200, 200, 200]);
  }));

test("OmniMatBench: a pasted calculation answer is scored slot by slot", () =>
  check("suites omnimat", async () => {
    const page = browser.page;
    await page.selectOption("#suite-select", "omnimat-cal");
    await page.waitForFunction(() => /final_answer_format/.test(document.querySelector("#suite-prompt").textContent));
    await page.fill("#suite-answer", "<answer>[\"not a number\"]</answer>");
    await page.click("#suite-score");
    await page.waitForSelector("#suite-label");
    // One slot for the first item's two: the slot counts differ.
    assert.equal(await page.locator("#suite-label").textContent(), "WrongCount");
    assert.match(await page.locator("#suite-verdict").textContent(), /slots/);
    // The slots side by side: the answer's one slot beside the first of the reference's two.
    const rows = page.locator("#suite-table tbody tr");
    assert.equal(await rows.count(), 2);
    assert.match(await rows.nth(0).textContent(), /not a number/);
    assert.match(await page.locator("#suite-verdict").textContent(), /slots read from <answer> as JSON/);
  }));

test("the selectors and their labels never overlap, on desktop, tablet and phone widths", () =>
  check("suites layout", async () => {
    const page = browser.page;
    const boxes = async () =>
      page.evaluate(() =>
        ["#suite-select", "#suite-rag-k", "#suite-task"].flatMap((sel) => {
          const select = document.querySelector(sel);
          if (!select) return [];
          const label = select.closest("label").querySelector("span");
          return [select, label].map((el) => {
            const r = el.getBoundingClientRect();
            return { sel: `${sel}${el === label ? " label" : ""}`, x: r.x, y: r.y, w: r.width, h: r.height };
          });
        }),
      );
    const overlap = (a, b) => a.x < b.x + b.w - 1 && b.x < a.x + a.w - 1 && a.y < b.y + b.h - 1 && b.y < a.y + a.h - 1;
    await page.selectOption("#suite-select", "alchemy");
    await page.waitForSelector("#suite-rag-k");
    try {
      for (const width of [1280, 768, 390]) {
        await page.setViewportSize({ width, height: 800 });
        const all = await boxes();
        assert.equal(all.length, 6, JSON.stringify(all));
        for (const b of all.filter((b) => !b.sel.endsWith("label"))) {
          assert.ok(b.w >= 60, `${width} px: ${b.sel} is ${b.w} px wide`);
        }
        for (let i = 0; i < all.length; i++) {
          for (let j = i + 1; j < all.length; j++) {
            assert.ok(!overlap(all[i], all[j]), `${width} px: ${all[i].sel} overlaps ${all[j].sel}: ${JSON.stringify([all[i], all[j]])}`);
          }
        }
      }
    } finally {
      await page.setViewportSize({ width: 1100, height: 800 });
    }
  }));

test("a judged answer without a judge says why in words, and a changed answer hides the old verdict", () =>
  check("suites judge reason", async () => {
    const page = browser.page;
    await page.selectOption("#suite-select", "alchemy");
    await page.waitForSelector("#suite-task option", { state: "attached" });
    await page.fill("#suite-answer", "## Synthesis\nMix and heat at 900 C for 12 h.");
    await page.click("#suite-score");
    await page.waitForSelector("#suite-label");
    assert.equal(await page.locator("#suite-label").textContent(), "JudgeFailed");
    const why = await page.locator("#suite-why").textContent();
    assert.match(why, /judge could not score/);
    assert.match(why, /judge_model/);
    await page.fill("#suite-answer", "another answer");
    await page.waitForSelector("#suite-stale");
    assert.equal(await page.locator("#suite-label").count(), 0);
  }));
