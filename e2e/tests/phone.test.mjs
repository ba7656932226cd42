// Phones: from 360 px up the pages are one column and nothing is wider than the screen (no
// sideways scrolling; the viewers and the nav fit).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
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

test("every control on the playground is a target of at least 24 × 24 px on a phone", () =>
  check("phone targets", async () => {
    const page = browser.page;
    await page.goto(server.url + "/");
    await page.waitForSelector("#viewer");
    await page.waitForFunction(() => document.querySelector("#action-prompt")?.value.length > 0);
    const small = await page.evaluate(() => {
      const controls = [...document.querySelectorAll("button, select, input, textarea, summary, a.export, header nav a")];
      return controls
        .filter((el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden")
        .map((el) => {
          // A checkbox is hit through its label.
          const target = el.matches("input[type=checkbox], input[type=radio]") ? el.closest("label") ?? el : el;
          const r = target.getBoundingClientRect();
          return { what: el.outerHTML.slice(0, 80), w: Math.round(r.width), h: Math.round(r.height) };
        })
        .filter((c) => c.w < 24 || c.h < 24);
    });
    assert.deepEqual(small, []);
  }));

test("pictures come first on a phone, and a vertical swipe on a viewer scrolls the page", async () => {
  // A phone: touch input, as a finger gives it (Chromium's touch events through the
  // compositor, which honours the canvas's touch-action as it would for a finger).
  const touch = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist", "--disable-quic"],
  });
  const context = await touch.newContext({ viewport: { width: 360, height: 740 }, hasTouch: true, isMobile: true });
  const page = await context.newPage();
  try {
    await withScreenshot(page, "phone swipe", async () => {
      await page.goto(server.url + "/");
      await page.waitForSelector("#viewer");
      await page.waitForFunction(() => document.querySelector("#action-prompt")?.value.length > 0);
      const viewer = await page.locator("#viewer").boundingBox();
      assert.ok(viewer.y < 740 / 2, `the first picture starts at ${viewer.y} px`);
      const cdp = await context.newCDPSession(page);
      const [x, y] = [viewer.x + viewer.width / 2, viewer.y + viewer.height / 2];
      // A finger on the middle of the picture moves up 150 px.
      const swipe = async () => {
        await page.evaluate(() => window.scrollTo(0, 0));
        await cdp.send("Input.dispatchTouchEvent", { type: "touchStart", touchPoints: [{ x, y }] });
        for (let k = 1; k <= 10; k++) {
          await cdp.send("Input.dispatchTouchEvent", { type: "touchMove", touchPoints: [{ x, y: y - 15 * k }] });
          await page.waitForTimeout(16);
        }
        await cdp.send("Input.dispatchTouchEvent", { type: "touchEnd", touchPoints: [] });
        await page.waitForTimeout(300);
        return page.evaluate(() => window.scrollY);
      };
      const scrolled = await swipe();
      assert.ok(scrolled > 50, `the page scrolled ${scrolled} px`);
      // "turn freely" gives swipes to the picture: the page stays where it is.
      const engage = '.view-tools[data-for=viewer] [data-view=engage]';
      await page.click(engage);
      assert.equal(await page.getAttribute(engage, "aria-pressed"), "true");
      assert.equal(await swipe(), 0);
    });
  } finally {
    await touch.close();
  }
});
