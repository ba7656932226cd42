// The Runs page: start a run of the reference baseline and see 100% everywhere.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, withScreenshot } from "../harness.mjs";

let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test("a reference-baseline run reaches 100% on every action; the table filters", () =>
  withScreenshot(browser.page, "runs page", async () => {
  const page = browser.page;
    await page.goto(server.url + "/runs");
    await page.waitForSelector("#run-model option[value=reference]", { state: "attached" });
    await page.selectOption("#run-model", "reference");
    await page.fill("#run-per-action", "2");
    await page.dispatchEvent("#run-per-action", "change");
    await page.click("#start-run");
    await page.waitForFunction(() => document.querySelector("#run-progress").textContent.includes("finished"), null, { timeout: 60_000 });
    assert.match(await page.locator("#run-progress").textContent(), /20\/20 tasks · success 1\.000/);
    const rates = await page.locator("#success-chart g.bar").evaluateAll((gs) => gs.map((g) => g.dataset.rate));
    assert.equal(rates.length, 10);
    assert.ok(rates.every((r) => r === "1.000"), rates.join(","));
    await page.waitForFunction(() => document.querySelectorAll("#results tbody tr").length === 20);
    await page.selectOption("#filter-action", "swap");
    assert.equal(await page.locator("#results tbody tr").count(), 2);
    await page.selectOption("#filter-label", "StructureMismatch");
    assert.equal(await page.locator("#results tbody tr").count(), 0);
    // The run lives on the server: a reload lists it.
    const runs = await (await fetch(server.url + "/api/runs")).json();
    assert.equal(runs.runs.length, 1);
  }));
