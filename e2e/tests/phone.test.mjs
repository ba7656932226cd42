// Phones: from 360 px up the pages are one column and nothing is wider than the screen (no
// sideways scrolling; the viewers and the nav fit).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, withScreenshot } from "../harness.mjs";

let server;
let browser;
before(async () => {
  server = await startServer();
  browser = await launchBrowser();
  await browser.page.setViewportSize({ width: 360, height: 740 });
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

const check = (name, fn) => withScreenshot(browser.page, name, fn);

/** The widest thing on the page and the page's own scroll width. */
async function widths(page) {
  return page.evaluate(() => {
    const wide = [...document.querySelectorAll("body *")]
      .filter((e) => e.getBoundingClientRect().width > 0 && !e.closest("table, pre"))
      .map((e) => ({ tag: e.tagName + (e.id ? "#" + e.id : "") + (e.className && typeof e.className === "string" ? "." + e.className.split(" ").join(".") : ""), right: e.getBoundingClientRect().right, parent: e.parentElement?.className }))
      .sort((a, b) => b.right - a.right);
    return { scroll: document.documentElement.scrollWidth, widest: wide[0] };
  });
}

for (const [path, ready] of [
  ["/", "#viewer"],
  ["/probes", "#probe-prompt"],
  ["/suites", "#suite-select"],
  ["/runs", "nav"],
  ["/room", "#room-page"],
]) {
  test(`${path} fits a 360 px screen`, () =>
    check(`phone ${path}`, async () => {
      const page = browser.page;
      await page.goto(server.url + path);
      await page.waitForSelector(ready, { state: "attached" });
      await page.waitForTimeout(300);
      const w = await widths(page);
      assert.ok(w.scroll <= 360, `page is ${w.scroll} px wide; widest: ${JSON.stringify(w.widest)}`);
      assert.ok(w.widest.right <= 361, `${JSON.stringify(w.widest)} runs off the screen`);
      for (const c of await page.locator("canvas").all()) {
        const box = await c.boundingBox();
        if (box) assert.ok(box.x + box.width <= 361, `a canvas ends at ${box.x + box.width}`);
      }
      const nav = await page.locator("header nav a").last().boundingBox();
      assert.ok(nav.x + nav.width <= 360, "the last nav link is on screen");
    }));
}
