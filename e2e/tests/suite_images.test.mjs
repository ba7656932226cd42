// OmniMatBench's multimodal demo item on the suites page: its image (drawn by
// scripts/omnimat-demo-image.py, built into the server) is served by the server and shown
// under the prompt; the model-asking controls stay available for it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, withScreenshot } from "../harness.mjs";

let server;
let browser;
before(async () => {
  server = await startServer({});
  browser = await launchBrowser();
  await browser.page.goto(server.url + "/suites");
  await browser.page.waitForSelector("#suite-select option[value=omnimat-cal]", { state: "attached" });
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

test("the demo item c21 shows its image under the prompt", () =>
  withScreenshot(browser.page, "suite image", async () => {
    const page = browser.page;
    await page.selectOption("#suite-select", "omnimat-cal");
    // A task's key is subfield/id (ids restart in every upstream subfield file).
    await page.waitForSelector('#suite-task option[value="Materials Physics/c21"]', { state: "attached" });
    await page.selectOption("#suite-task", "Materials Physics/c21");
    await page.waitForFunction(() => /unit cell of a two-dimensional crystal/.test(document.querySelector("#suite-prompt").textContent));
    const img = page.locator("#suite-images img");
    await img.waitFor();
    // Loaded, decoded, and the 96 x 96 picture we drew.
    await page.waitForFunction(() => {
      const i = document.querySelector("#suite-images img");
      return i && i.complete && i.naturalWidth > 0;
    });
    const size = await img.evaluate((i) => [i.naturalWidth, i.naturalHeight]);
    assert.deepEqual(size, [96, 96]);
    assert.match(await img.getAttribute("src"), /\/api\/suites\/omnimat-cal\/tasks\/Materials%20Physics%2Fc21\/images\/awp_demo_c21_img$/);
    assert.equal(await page.locator("#suite-images-unavailable").count(), 0);
    // A text-only item has no image block.
    await page.selectOption("#suite-task", "Materials Physics/c01");
    await page.waitForFunction(() => !document.querySelector("#suite-images"));
  }));
