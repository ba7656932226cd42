// The Runs page: runs of the two baselines side by side (reference 100%, copy-input 0%), a
// reload in the middle of a run, filters, and a result opened as a case.
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

/** Wait until `n` runs are shown and all of them have finished. */
const allFinished = (page, n, timeout) => page.waitForFunction((n) => {
  const lines = [...document.querySelectorAll("#run-progress .run-line")];
  return lines.length === n && lines.every((l) => l.textContent.includes("finished"));
}, n, { timeout });

test("two baselines run side by side: reference 100% and copy-input 0% on every action", () =>
  withScreenshot(browser.page, "runs page", async () => {
    const page = browser.page;
    await page.goto(server.url + "/runs");
    await page.waitForSelector("#run-model option[value=reference]", { state: "attached" });
    // No model configured: the page says how to configure one; the baselines still run.
    assert.match(await page.locator("#only-baselines").textContent(), /--config/);
    await page.selectOption("#run-model", ["reference", "copy-input"]);
    await page.fill("#run-per-action", "2");
    await page.dispatchEvent("#run-per-action", "change");
    await page.click("#start-run");
    await allFinished(page, 2, 60_000);
    const lines = await page.locator("#run-progress .run-line").allTextContents();
    assert.match(lines.find((l) => l.includes("reference")), /20\/20 tasks · success 1\.000/);
    assert.match(lines.find((l) => l.includes("copy-input")), /20\/20 tasks · success 0\.000/);
    const bars = await page.locator("#success-chart g.bar").evaluateAll((gs) => gs.map((g) => [g.dataset.model, g.dataset.rate]));
    assert.equal(bars.length, 20, "one bar per action and model");
    assert.ok(bars.every(([m, r]) => r === (m === "reference" ? "1.000" : "0.000")), JSON.stringify(bars));
    // Every reference success is in the max_dist histogram; copy-input has none.
    await page.waitForFunction(() => document.querySelectorAll("#results tbody tr").length === 40);
    const counts = await page.locator("#max-dist-chart rect.bin").evaluateAll((rs) => rs.map((r) => [r.dataset.model, Number(r.dataset.count)]));
    const total = (m) => counts.filter(([x]) => x === m).reduce((a, [, n]) => a + n, 0);
    assert.equal(total("reference"), 20);
    assert.equal(total("copy-input"), 0);

    await page.selectOption("#filter-action", "swap");
    assert.equal(await page.locator("#results tbody tr").count(), 4);
    await page.selectOption("#filter-label", "AtomCountMismatch");
    await page.selectOption("#filter-action", "");
    const mismatches = await page.locator("#results tbody tr").count();
    assert.ok(mismatches > 0 && mismatches < 20, `${mismatches} copy-input rows change the atom count`);
    await page.selectOption("#filter-label", "");
  }));

test("a reload in the middle of a run shows it again, and it finishes", () =>
  withScreenshot(browser.page, "runs reload", async () => {
    const page = browser.page;
    await page.selectOption("#run-model", ["reference"]);
    await page.fill("#run-per-action", "12");
    await page.dispatchEvent("#run-per-action", "change");
    await page.fill("#run-concurrency", "1");
    await page.dispatchEvent("#run-concurrency", "change");
    const before = page.url();
    await page.click("#start-run");
    await page.waitForFunction((before) => location.href !== before && /\/runs\?runs=[\w-]+$/.test(location.href) && document.querySelectorAll("#run-progress .run-line").length === 1, before);
    const id = await page.locator("#run-progress .run-line").getAttribute("data-run");
    await page.reload();
    await page.waitForSelector(`#run-progress .run-line[data-run="${id}"]`);
    await allFinished(page, 1, 120_000);
    assert.match(await page.locator("#run-progress").textContent(), /120\/120 tasks · success 1\.000/);
  }));

test("a result row opens its task and answer in the playground", () =>
  withScreenshot(browser.page, "runs open case", async () => {
    const page = browser.page;
    await page.waitForFunction(() => document.querySelectorAll("#results tbody tr").length === 120);
    await page.selectOption("#filter-action", "remove");
    const task = await page.locator("#results tbody tr").first().locator("td").nth(1).textContent();
    assert.match(task, /remove/);
    await page.locator("#results tbody tr .open-case").first().click();
    await page.waitForURL(/#case=/);
    await page.waitForSelector("#verdict");
    assert.equal(await page.locator("#verdict").getAttribute("data-label"), "Success");
    assert.match(await page.inputValue("#action-prompt"), /^Remove the atom at index \d+/);
    await page.goBack();
    await page.waitForSelector("#run-progress .run-line");
  }));

test("another suite from the runs page: its own baselines only, no generator fields, a finished run", () =>
  withScreenshot(browser.page, "runs other suite", async () => {
    const page = browser.page;
    await page.goto(server.url + "/runs");
    await page.waitForSelector("#run-suite option[value=omnimat-cal]", { state: "attached" });
    await page.selectOption("#run-suite", "omnimat-cal");
    await page.waitForFunction(() => !document.querySelector("#run-model option[value=copy-input]"));
    const offered = await page.locator("#run-model option").evaluateAll((os) => os.map((o) => o.value));
    assert.ok(offered.includes("reference"), offered.join(" "));
    assert.ok(!offered.includes("empty") && !offered.includes("copy-input"), offered.join(" "));
    assert.equal(await page.locator("#run-per-action").count(), 0, "no per-group count for given tasks");
    await page.selectOption("#run-model", ["reference"]);
    await page.click("#start-run");
    await page.waitForFunction(() => [...document.querySelectorAll("#run-progress .run-line")].some((l) => /finished/.test(l.textContent)), null, { timeout: 60_000 });
    const line = await page.locator("#run-progress .run-line").first().textContent();
    assert.match(line, /reference · run-\w+ · finished · (\d+)\/\1 tasks · success/);
  }));
