// The papers' tables on the Runs page: OmniMatBench's overall score joins a model's CAL and
// QA runs subfield by subfield, MatTools' failed answers are counted by the paper's error
// classes, and the same report downloads as CSV.
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
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

/** Start a run from the page's origin and return its id. */
const startRun = (page, body) =>
  page.evaluate(async (body) => {
    const res = await fetch("/api/runs", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
    return (await res.json()).run_id;
  }, body);

/** The cells of the paper table whose caption starts with `title`, row label → cell texts. */
const tableRows = (page, title) =>
  page.evaluate((title) => {
    const figure = [...document.querySelectorAll("#paper-tables figure")].find((f) =>
      f.querySelector("figcaption strong")?.textContent.startsWith(title));
    if (!figure) return null;
    return Object.fromEntries([...figure.querySelectorAll("tbody tr")].map((tr) => {
      const cells = [...tr.querySelectorAll("td")].map((td) => td.textContent.trim());
      return [cells[0], cells.slice(1)];
    }));
  }, title);

test("the runs page shows OmniMatBench's overall table and MatTools' error classes, and exports them", () =>
  withScreenshot(browser.page, "runs tables", async () => {
    const page = browser.page;
    await page.goto(server.url + "/runs");
    const ids = [];
    ids.push(await startRun(page, { suite: "omnimat-cal", model: "reference" }));
    ids.push(await startRun(page, { suite: "omnimat-qa", model: "reference" }));
    ids.push(await startRun(page, { suite: "mattools-code", model: "empty" }));
    await page.goto(`${server.url}/runs?runs=${ids.join(",")}`);
    await page.waitForSelector("#paper-tables figure", { timeout: 180_000 });
    await page.waitForFunction(() => document.querySelectorAll("#paper-tables figure").length >= 5, null, { timeout: 30_000 });

    // CAL: the reference answers every demo item right; QA: no judge is configured here, so
    // every item's F1 is 0 (the page says the judge failed). Overall = (1 + 0) / 2 in each
    // subfield with both kinds of item; a subfield with one kind only has no overall ("–").
    const overall = await tableRows(page, "Overall score");
    assert.ok(overall, "an overall table");
    const labels = Object.keys(overall);
    assert.match(labels.at(-1), /^mean/);
    const valued = Object.entries(overall).filter(([, cells]) => cells[0] !== "–");
    assert.ok(valued.length >= 3, JSON.stringify(overall));
    for (const [label, cells] of valued) {
      assert.deepEqual(cells, ["0.5000"], `${label}: ${cells}`);
    }
    const cal = await tableRows(page, "CAL slot accuracy per subfield");
    assert.ok(Object.values(cal).every((cells) => cells[0] === "1"), JSON.stringify(cal));

    // MatTools: the `empty` baseline's answers are all function errors, each in a class.
    const classes = await tableRows(page, "Failed answers by error class");
    assert.deepEqual(Object.keys(classes), ["Import Error", "API Hallucination", "Incorrect Parameter",
      "Syntax Error", "Type Mismatch", "Logic Error", "Other"]);
    const failed = Object.values(classes).reduce((a, [c]) => a + Number(c), 0);
    const rates = await tableRows(page, "Function Runnable Rate");
    assert.equal(rates["Function Runnable Rate"][0], "0");
    assert.ok(failed > 0, JSON.stringify(classes));

    // The CSV download holds the same overall cells.
    const href = await page.locator("#paper-tables a.export[data-format=csv]").getAttribute("href");
    const csv = await page.evaluate(async (href) => (await fetch(href)).text(), href);
    assert.ok(csv.startsWith("table,row,column,mean,std,n\n"), csv.slice(0, 80));
    const overallLines = csv.split("\n").filter((l) => l.startsWith("\"Overall score") || l.startsWith("Overall score"));
    assert.equal(overallLines.length, valued.length, overallLines.join("\n"));
    assert.ok(overallLines.every((l) => l.endsWith(",0.5,,1")), overallLines.join("\n"));
    // The SVG download draws the same bars as the page: each chart's values, in order.
    const svgHref = await page.locator("#paper-tables a.export[data-format=svg]").getAttribute("href");
    const svg = await page.evaluate(async (href) => (await fetch(href)).text(), svgHref);
    assert.ok(svg.startsWith("<svg xmlns="), svg.slice(0, 80));
    const onPage = await page.locator("#paper-tables .table-chart .bar").evaluateAll((gs) => gs.map((g) => g.dataset.value));
    const inFile = svg.split("</title></rect>").slice(0, -1).map((p) => p.slice(p.lastIndexOf(": ") + 2));
    assert.ok(onPage.length > 0);
    assert.deepEqual(inFile, onPage);
  }));

test("a probe run from the runs page: CIF-Repair's 22 corruptions, the reference repairs all, the copy none", () =>
  withScreenshot(browser.page, "runs probe", async () => {
    const page = browser.page;
    await page.goto(server.url + "/runs");
    await page.waitForSelector("#run-suite option[value=cif-repair]", { state: "attached" });
    await page.selectOption("#run-suite", "cif-repair");
    await page.waitForSelector("#run-model option[value=copy-input]", { state: "attached" });
    await page.selectOption("#run-model", ["reference", "copy-input"]);
    await page.fill("#run-per-action", "1");
    await page.dispatchEvent("#run-per-action", "change");
    await page.click("#start-run");
    await page.waitForFunction(() => {
      const lines = [...document.querySelectorAll("#run-progress .run-line")];
      return lines.length === 2 && lines.every((l) => l.textContent.includes("finished"));
    }, null, { timeout: 120_000 });
    const lines = await page.locator("#run-progress .run-line").allTextContents();
    assert.match(lines.find((l) => l.includes("reference")), /22\/22 tasks · success 1\.000/);
    assert.match(lines.find((l) => l.includes("copy-input")), /22\/22 tasks · success 0\.000/);
    await page.waitForSelector("#paper-tables figure", { timeout: 60_000 });
    const rows = await tableRows(page, "CIF-Repair success rate per corruption");
    assert.ok(rows, "the probe's table");
    const labels = Object.keys(rows);
    assert.equal(labels.length, 23, labels.join(" | "));
    assert.ok(labels.includes("remove _cell_length_a") && labels.includes("rename _cell_* → _lattice_*"), labels.join(" | "));
    assert.match(labels.at(-1), /^mean/);
    // One column per run, in the order the page lists them.
    const models = await page.locator("#paper-tables figure thead th").evaluateAll((ths) => ths.map((t) => t.textContent));
    const ref = models.findIndex((m) => m.startsWith("reference")) - 1;
    assert.ok(ref >= 0, models.join(" | "));
    for (const [label, cells] of Object.entries(rows)) {
      assert.equal(cells[ref], "1", `${label}: ${cells}`);
      assert.equal(cells[1 - ref], "0", `${label}: ${cells}`);
    }
  }));

test("a prompt ablation from the runs page: one run per chosen wording, each column named by it", () =>
  withScreenshot(browser.page, "runs variants", async () => {
    const page = browser.page;
    await page.goto(server.url + "/runs");
    await page.waitForSelector("#run-suite option[value=atomworld]", { state: "attached" });
    await page.selectOption("#run-suite", "atomworld");
    await page.waitForSelector("#run-model option[value=reference]", { state: "attached" });
    await page.selectOption("#run-model", ["reference"]);
    // The wordings are offered with what each is.
    await page.waitForSelector("#run-variant option[value=newest]", { state: "attached" });
    const offered = await page.locator("#run-variant option").allTextContents();
    assert.ok(offered.includes("newest (Table 1 wording)"), offered.join(" | "));
    await page.selectOption("#run-variant", ["newest", "four_decimal"]);
    await page.fill("#run-per-action", "1");
    await page.dispatchEvent("#run-per-action", "change");
    await page.click("#start-run");
    await page.waitForFunction(() => {
      const lines = [...document.querySelectorAll("#run-progress .run-line")];
      return lines.length === 2 && lines.every((l) => l.textContent.includes("finished"));
    }, null, { timeout: 120_000 });
    await page.waitForSelector("#paper-tables figure", { timeout: 60_000 });
    const rows = await tableRows(page, "Success rate per action");
    assert.ok(rows, "AtomWorld's success table");
    const heads = await page.locator("#paper-tables figure").first().locator("thead th").allTextContents();
    assert.ok(heads.some((h) => h.startsWith("reference · Table 1 wording")), heads.join(" | "));
    assert.ok(heads.some((h) => h.startsWith("reference · four-decimal wording")), heads.join(" | "));
    for (const [label, cells] of Object.entries(rows)) {
      assert.deepEqual(cells, ["1", "1"], `${label}: ${cells}`);
    }
  }));

test("a MatTools run opened from its address: the Suite selector names its suite, and a chart of two groups keeps the page's text size", () =>
  withScreenshot(browser.page, "runs opened mattools", async () => {
    const page = browser.page;
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(server.url + "/runs");
    const id = await startRun(page, { suite: "mattools-qa", model: "reference" });
    await page.goto(`${server.url}/runs?runs=${id}`);
    await page.waitForSelector("#success-chart .action-label", { timeout: 120_000 });
    // The chart is drawn from the run's view, which sets the selectors as it arrives.
    assert.equal(await page.inputValue("#run-suite"), "mattools-qa");
    const shownText = await page.locator("#run-suite option:checked").textContent();
    assert.match(shownText, /^mattools-qa /);
    // The model list offers the suite's own baseline, chosen as the run's model.
    assert.deepEqual(await page.locator("#run-model").evaluate((s) => [...s.selectedOptions].map((o) => o.value)), ["reference"]);

    // Each group label is drawn at about the page's size (8 SVG units at the chart's scale),
    // not blown up by a chart that stretches two groups across the page.
    const sizes = await page.locator("#success-chart").evaluate((svg) => {
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      const groups = svg.querySelectorAll(".action-label").length;
      const line = svg.querySelector(".action-label tspan").getBoundingClientRect().height;
      return { px: 8 * scale, groups, line };
    });
    assert.ok(sizes.groups >= 1, JSON.stringify(sizes));
    assert.ok(sizes.px >= 7 && sizes.px <= 14, JSON.stringify(sizes));
    assert.ok(sizes.line <= 20, JSON.stringify(sizes));
  }));
