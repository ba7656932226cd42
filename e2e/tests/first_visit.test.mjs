// A first visit says in one line what to do; "Got it" dismisses it for good (this browser).
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

test("the first-visit line is shown once and stays dismissed after a reload", () =>
  withScreenshot(browser.page, "first visit", async () => {
    const page = browser.page;
    await page.goto(server.url + "/");
    await page.waitForSelector("#first-visit");
    assert.match(await page.locator("#first-visit").textContent(), /paste a model's answer/);
    await page.click("#first-visit-dismiss");
    assert.equal(await page.locator("#first-visit").count(), 0);
    await page.reload();
    await page.waitForSelector("#viewer");
    assert.equal(await page.locator("#first-visit").count(), 0, "still dismissed");
  }));
