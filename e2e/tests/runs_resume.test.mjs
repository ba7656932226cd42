// A run whose every model call failed ends incomplete: the runs page offers to resume it, and
// resuming asks the server to go on where it stopped.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, withScreenshot } from "../harness.mjs";

let server;
let browser;
before(async () => {
  server = await startServer({
    configToml: `[[models]]\nname = "dead-gpt"\nprovider = "openai-compatible"\nmodel = "d"\nbase_url = "http://127.0.0.1:9/v1"\n` +
      // One quick retry: what is tested is the run's end and its resumption, not the backoff.
      `[limits]\nmax_retries = 1\nbackoff_base_ms = 50\nbackoff_max_ms = 100\n`,
  });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

test("an incomplete run can be resumed from the runs page", () =>
  withScreenshot(browser.page, "runs resume", async () => {
    const page = browser.page;
    await page.goto(server.url + "/runs");
    await page.waitForSelector("#run-model option[value=dead-gpt]", { state: "attached" });
    await page.selectOption("#run-model", ["dead-gpt"]);
    await page.fill("#run-per-action", "1");
    await page.dispatchEvent("#run-per-action", "change");
    await page.click("#start-run");
    await page.waitForFunction(() => /incomplete/.test(document.querySelector("#run-progress .run-line")?.textContent ?? ""), null, { timeout: 120_000 });
    const button = page.locator("#run-progress .run-line button.resume-run");
    assert.equal(await button.textContent(), "Resume");
    const resumed = page.waitForResponse((r) => r.url().endsWith("/resume") && r.request().method() === "POST");
    await button.click();
    assert.equal((await resumed).status(), 202);
    await page.waitForFunction(() => /incomplete/.test(document.querySelector("#run-progress .run-line")?.textContent ?? ""), null, { timeout: 120_000 });
  }));
