// The probes page: pure-coordinate tasks, CIF-Repair and CIF-Gen, each generated from a
// seed, answered by pasting, and scored in the page.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, withScreenshot } from "../harness.mjs";

let server;
let browser;
before(async () => {
  server = await startServer();
  browser = await launchBrowser();
  await browser.page.goto(server.url + "/probes");
  await browser.page.waitForSelector("#probe-prompt");
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

const check = (name, fn) => withScreenshot(browser.page, name, fn);
const label = () => browser.page.locator("#verdict").getAttribute("data-label");

test("pure coordinates: the points are drawn, the ground truth passes, a moved point fails by its distance", () =>
  check("probe points", async () => {
    const page = browser.page;
    await page.selectOption("#points-kind", "rotate_around");
    const prompt = await page.locator("#probe-prompt").textContent();
    assert.match(prompt, /<answer>/);
    await page.waitForFunction(() => JSON.parse(document.querySelector("#viewer").dataset.sites || "[]").length >= 2);
    await page.click("#paste-truth");
    await page.waitForSelector("#verdict");
    assert.equal(await label(), "Success");
    assert.equal(await page.locator("#points-threshold").textContent(), "0.05");
    // Shift the first coordinate of the answer by 0.3 Å: outside the 0.05 Å threshold.
    const truth = await page.inputValue("#answer");
    const moved = truth.replace(/\[\[(-?[\d.]+)/, (m, x) => `[[${(Number(x) + 0.3).toFixed(6)}`);
    await page.fill("#answer", moved);
    await page.waitForFunction(() => document.querySelector("#verdict").dataset.label === "OutsideThreshold");
    assert.equal(Number(await page.locator("#points-max").textContent()), 0.3);
    // The answer's points are drawn over the target.
    await page.waitForFunction(() => document.querySelector("#viewer-target").dataset.overlay);
    assert.ok(Math.abs(JSON.parse(await page.locator("#viewer-target").getAttribute("data-overlay")).worst_angstrom - 0.3) < 1e-6);
    await page.fill("#answer", "<answer>[[1, 2]]</answer>");
    await page.waitForFunction(() => document.querySelector("#verdict").dataset.label === "InvalidShape");
    const before = prompt;
    await page.click("#probe-random");
    await page.waitForFunction((p) => document.querySelector("#probe-prompt").textContent !== p, before);
    assert.equal(await page.inputValue("#answer"), "", "a new task clears the answer");
  }));

test("CIF-Repair: the corruption is shown as a diff; the original repairs it; the damaged file does not", () =>
  check("probe repair", async () => {
    const page = browser.page;
    await page.click("button[data-probe=repair]");
    await page.waitForSelector("#repair-diff");
    assert.ok((await page.locator("#repair-diff tr").count()) >= 2, "at least one changed line");
    assert.match(await page.locator("#probe-prompt").textContent(), /^You are a CIF operation assistant\. You will be given a CIF content that may be corrupted or incomplete\./);
    await page.click("#paste-truth");
    await page.waitForSelector("#verdict");
    assert.equal(await label(), "Success");
    // Answering with the damaged file itself is not a repair.
    const prompt = await page.locator("#probe-prompt").textContent();
    const damaged = prompt.slice(prompt.indexOf("data_"));
    await page.fill("#answer", `<cif>\n${damaged}\n</cif>`);
    await page.waitForFunction(() => document.querySelector("#verdict").dataset.label !== "Success");
  }));

test("CIF-Gen: the reference structure scores Success; the wrong element a composition mismatch", () =>
  check("probe gen", async () => {
    const page = browser.page;
    await page.click("button[data-probe=gen]");
    await page.waitForSelector("#gen-task");
    await page.waitForFunction(() => JSON.parse(document.querySelector("#viewer").dataset.sites || "[]").length >= 1);
    await page.click("#paste-truth");
    await page.waitForSelector("#verdict");
    assert.equal(await label(), "Success");
    const truth = await page.inputValue("#answer");
    // Replace the first site's element symbol (type symbol column) by another element.
    const wrong = truth.replace(/^(\s*)([A-Z][a-z]?)(\s+\2\d+\s+1\s)/m, (m, sp, el, rest) => `${sp}${el === "Xe" ? "Kr" : "Xe"}${rest}`);
    assert.notEqual(wrong, truth);
    await page.fill("#answer", wrong);
    await page.waitForFunction(() => document.querySelector("#verdict").dataset.label === "CompositionMismatch");
    await page.fill("#answer", "no tags here");
    await page.waitForFunction(() => document.querySelector("#verdict").dataset.label === "OutputFormatError");
  }));
