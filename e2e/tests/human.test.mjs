// AlchemyBench's human scoring in the browser: a run of our demo recipes judged by a local
// fake judge; a person scores three recipes, the scores survive a reload, and the agreement
// with the judge is shown.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, withScreenshot, fakeProvider } from "../harness.mjs";

const KEYS = [
  "materials_appropriateness_score", "equipment_appropriateness_score",
  "procedure_completeness_score", "procedure_similarity_score", "procedure_feasibility_score",
  "characterization_appropriateness_score", "characterization_similarity_score", "overall_score",
];

/** An OpenAI-compatible judge on 127.0.0.1 whose score depends on the recipe it reads. */
function fakeJudge() {
  return fakeProvider((_, body) => {
    const score = 1 + (body.length % 9) * 0.5;
    const json = Object.fromEntries(KEYS.map((k) => [k, score]));
    return "Reasoning.\n```json\n" + JSON.stringify(json) + "\n```";
  });
}

let judge;
let server;
let browser;
let runId;
before(async () => {
  judge = await fakeJudge();
  const base = judge.baseUrl;
  server = await startServer({
    configToml: `[[models]]\nname = "judge"\nprovider = "openai-compatible"\nmodel = "j"\nbase_url = "${base}"\nprice_input_per_mtok = 0.0\nprice_output_per_mtok = 0.0\n\n[limits]\njudge_model = "judge"\n`,
  });
  const created = await fetch(server.url + "/api/runs", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ suite: "alchemy", model: "reference" }),
  }).then((r) => r.json());
  runId = created.run_id;
  for (let i = 0; i < 300; i++) {
    const run = await fetch(`${server.url}/api/runs/${runId}`).then((r) => r.json());
    if (run.status === "finished") break;
    await new Promise((r) => setTimeout(r, 100));
  }
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
  await judge?.close();
});

const check = (name, fn) => withScreenshot(browser.page, name, fn);

test("human scores are saved, survive a reload and are compared with the judge's", () =>
  check("human scoring", async () => {
    const page = browser.page;
    await page.goto(`${server.url}/human?run=${runId}`);
    await page.waitForSelector("#human-table select.mine", { state: "attached" });
    const selects = page.locator('#human-table select.mine[data-criterion="overall_score"]');
    assert.equal(await selects.count(), 12);
    const picks = ["2", "3.5", "5"];
    for (let i = 0; i < picks.length; i++) {
      await selects.nth(i).selectOption(picks[i]);
      await page.waitForFunction(
        (n) => document.querySelector('#human-agreement tr[data-criterion="overall_score"] .n')?.textContent === String(n),
        i + 1,
      );
    }
    await page.reload();
    await page.waitForFunction(() => document.querySelector('#human-agreement tr[data-criterion="overall_score"] .n')?.textContent === "3");
    const kept = page.locator('#human-table select.mine[data-criterion="overall_score"]');
    for (let i = 0; i < picks.length; i++) {
      assert.equal(await kept.nth(i).inputValue(), picks[i]);
    }
    // Pearson's r of the person's three scores and the judge's, recomputed here from the
    // judge's scores the page shows beside them ("—" when the judge gave all three the same).
    const judged = [];
    for (let i = 0; i < picks.length; i++) {
      const cell = page.locator('#human-table select.mine[data-criterion="overall_score"]').nth(i).locator("xpath=..");
      judged.push(Number(await cell.locator(".judge").textContent()));
    }
    const mine = picks.map(Number);
    const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
    const [mx, my] = [mean(mine), mean(judged)];
    const sxy = mine.reduce((s, x, i) => s + (x - mx) * (judged[i] - my), 0);
    const sxx = mine.reduce((s, x) => s + (x - mx) ** 2, 0);
    const syy = judged.reduce((s, y) => s + (y - my) ** 2, 0);
    const expected = syy === 0 ? "—" : (sxy / Math.sqrt(sxx * syy)).toFixed(3);
    const pearson = await page.locator('#human-agreement tr[data-criterion="overall_score"] .pearson').textContent();
    assert.equal(pearson, expected, `judge ${judged}, mine ${mine}`);
    assert.match(await page.locator("#human-csv").getAttribute("href"), /human-scores\.csv$/);

    // A second person, by name, scores the same three recipes: they start from nothing, and
    // once they have scored, the people's agreement (ICC(3,k) over the three) appears.
    await page.fill("#human-scorer", "ana");
    await page.dispatchEvent("#human-scorer", "change");
    await page.waitForFunction(() => document.querySelector('#human-agreement tr[data-criterion="overall_score"] .n')?.textContent === "0");
    const hers = ["2.5", "3", "4.5"];
    for (let i = 0; i < hers.length; i++) {
      await page.locator('#human-table select.mine[data-criterion="overall_score"]').nth(i).selectOption(hers[i]);
      await page.waitForFunction(
        (n) => document.querySelector('#human-agreement tr[data-criterion="overall_score"] .n')?.textContent === String(n),
        i + 1,
      );
    }
    const row = page.locator('#human-consensus tr[data-criterion="overall_score"]');
    await row.waitFor();
    const cells = await row.locator("td").allTextContents();
    assert.deepEqual(cells.slice(1, 3), ["2", "3"], cells.join(" | "));
    // ICC(3,2) of [[2, 2.5], [3.5, 3], [5, 4.5]] by hand: BMS = 19/6, EMS = 1/6.
    assert.equal(cells[3], (18 / 19).toFixed(3));
    assert.match(await page.locator("#human-csv").getAttribute("href"), /human-scores\.csv\?scorer=ana$/);
    // The name is kept in this browser: back to the unnamed scorer for the tests that follow.
    await page.fill("#human-scorer", "");
    await page.dispatchEvent("#human-scorer", "change");
  }));

test("each recipe shows its target, the prediction and the reference side by side, readable by keyboard", () =>
  check("human recipes", async () => {
    const page = browser.page;
    const results = await fetch(`${server.url}/api/runs/${runId}/results`).then((r) => r.json());
    const first = results.results[0];
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${server.url}/human?run=${runId}`);
    const card = page.locator(`.human-recipe[data-task="${first.task_id}"]`);
    await card.waitFor();
    // The texts are the task's and the answer's, whole (the reference baseline predicts the
    // reference recipe itself).
    const text = (cls) => card.locator(`.${cls} pre`).textContent();
    assert.equal(await text("recipe-target"), first.task.contribution);
    assert.equal(await text("recipe-reference"), first.task.recipe);
    assert.equal(await text("recipe-prediction"), first.response);
    assert.match(await card.locator(".recipe-prediction h4").textContent(), /Predicted recipe \(reference\)/);
    assert.match(await card.locator("h3").textContent(), new RegExp(first.task_id));
    // Side by side at 1280 px: three boxes on one line, none overlapping. The card can be
    // there before its boxes have their final places: they are measured once they share a
    // line, or after 10 s, when the assertions below say where they are.
    const classes = ["recipe-target", "recipe-prediction", "recipe-reference"];
    await page
      .waitForFunction(
        ([task, classes]) => {
          const card = document.querySelector(`.human-recipe[data-task="${task}"]`);
          const tops = classes.map((c) => card?.querySelector(`.${c}`)?.getBoundingClientRect().top);
          return tops.every((t) => t !== undefined && Math.abs(t - tops[0]) < 2);
        },
        [first.task_id, classes],
        { timeout: 10000 },
      )
      .catch(() => {});
    const boxes = [];
    for (const cls of classes) {
      boxes.push(await card.locator(`.${cls}`).boundingBox());
    }
    for (let i = 1; i < 3; i++) {
      assert.ok(Math.abs(boxes[i].y - boxes[0].y) < 2, `box ${i} at y ${boxes[i].y}, first at ${boxes[0].y}`);
      assert.ok(boxes[i].x >= boxes[i - 1].x + boxes[i - 1].width, `box ${i} overlaps box ${i - 1}`);
    }
    // Each of the eight criteria is a labelled choice: its name is read with the control.
    const labels = await card.locator("label.criterion .criterion-name").allTextContents();
    assert.equal(labels.length, 8);
    assert.equal(labels[0].toLowerCase(), "materials appropriateness");
    // Keyboard only: from the reference text, Tab reaches the first criterion's choice.
    await card.locator(".recipe-reference pre").focus();
    await page.keyboard.press("Tab");
    const focused = await page.evaluate(() => document.activeElement?.dataset?.criterion ?? document.activeElement?.tagName);
    assert.equal(focused, KEYS[0]);
    // On a phone the three stack: one column, each as wide as the card.
    await page.setViewportSize({ width: 390, height: 800 });
    const target = await card.locator(".recipe-target").boundingBox();
    const reference = await card.locator(".recipe-reference").boundingBox();
    assert.ok(reference.y > target.y + target.height - 1, "stacked on a phone");
    await page.setViewportSize({ width: 1100, height: 800 });
  }));

test("the Runs page charts the judge's mean score per criterion in the paper's table and prints the suite's figures", () =>
  check("alchemy run charts", async () => {
    const page = browser.page;
    await page.goto(`${server.url}/runs?runs=${runId}`);
    // The paper table of the judge's scores per criterion, charted by each run's mean.
    const chart = '#paper-tables figure:has(figcaption strong:text-is("Judge scores per criterion (1-5), every item")) .table-chart';
    await page.waitForSelector(`${chart} .bar`);
    const bars = page.locator(`${chart} .bar`);
    assert.ok((await bars.count()) >= 7, `${await bars.count()} criteria charted`);
    for (const v of await bars.evaluateAll((gs) => gs.map((g) => Number(g.dataset.value)))) {
      assert.ok(v >= 1 && v <= 5, `mean ${v} outside 1–5`);
    }
    assert.match(await page.locator(".run-headline").first().textContent(), /overall/);
    // The suite's figures are a table on the page, not Markdown: a header row and one row
    // per criterion, with no pipe characters left.
    const headline = page.locator("table.run-headline").first();
    assert.equal(await headline.locator("thead th").first().textContent(), "criterion");
    assert.ok((await headline.locator("tbody tr").count()) >= 9);
    assert.ok(!(await headline.textContent()).includes("|"));
  }));
