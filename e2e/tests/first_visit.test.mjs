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

test("while the module loads, the first screen shows the title and the first structure's picture", async () => {
  // A browser whose module never arrives shows what a slow network shows meanwhile (its
  // console then reports the refused module: not this test's concern).
  const blocked = await launchBrowser();
  let caption;
  try {
    const page = blocked.page;
    await page.route(/\.wasm$/, (route) => route.abort());
    await page.goto(server.url + "/");
    await page.waitForFunction(() => document.querySelector("#first-picture img")?.complete);
    assert.match(await page.locator("#first-screen h1").textContent(), /AtomWorld Playground/);
    assert.ok(await page.locator("#first-picture img").evaluate((img) => img.naturalWidth > 100));
    caption = (await page.locator("#first-picture figcaption").textContent()).trim();
    // Other pages and shared links show the title only.
    for (const where of ["/runs", "/#c=anything"]) {
      await page.goto(server.url + where);
      await page.waitForSelector("#first-screen h1");
      assert.equal(await page.locator("#first-picture").count(), 0, where);
    }
  } finally {
    await blocked.close();
  }
  // The app replaces the first screen, and its first structure is the one pictured.
  await withScreenshot(browser.page, "first screen replaced", async () => {
    const page = browser.page;
    await page.goto(server.url + "/");
    await page.waitForSelector("ul.legend[data-for=viewer] li");
    assert.equal(await page.locator("#first-screen").count(), 0);
    assert.equal((await page.locator("#input-name").textContent()).trim(), caption);
  });
});
